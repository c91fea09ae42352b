// Package liveness lets replicas ask one another whether a run's owner is
// still alive before they take over its expired lease (runtime.OwnerProbe).
// The database alone cannot tell a replica cut off from it from a dead one;
// the replicas themselves can: each records the URL it is reached at
// (store.Replicas, Announce), answers GET /internal/replica/runs/{id}
// (Handler) with its name and whether it executes the run, and asks an
// owner the same (Probe).
//
// It owns the probe's wire format and the HTTP client and handler; the rule
// that uses the answers (who keeps a run, for how long) is the runtime's
// (internal/runtime/outage.go).
//
// The probe path is served ahead of authentication: it answers one bit
// about a run id the caller must already know (ids are random UUIDs), and a
// replica cannot hold another's credentials.
//
// liveness imports store and errdefs; never runtime (the runtime's methods
// it needs are the Runs interface), api or a store implementation.
//
// Goroutines: Announce runs on its caller's goroutine until ctx ends.
//
// Imports: errdefs, store.
package liveness
