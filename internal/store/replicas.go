package store

import (
	"context"
	"net/url"
	"time"

	"agentd/internal/errdefs"
)

// Replica is a server process as the other replicas reach it: before a
// replica takes over a run whose lease expired, it asks the run's owner
// whether it still executes it (runtime.OwnerProbe).
type Replica struct {
	// ID is the name the replica holds leases under.
	ID string
	// URL is the base URL the other replicas reach it at (http or https).
	URL string
	// SeenAt is when it last recorded itself (the store's clock).
	SeenAt time.Time
}

// ReplicaRetention is how long a replica that stopped recording itself is
// remembered: a live replica records itself more often (every minute).
const ReplicaRetention = time.Hour

// Replicas records how replicas reach one another. A store that replicas
// share implements it (pgstore, and memstore for tests); the runtime finds
// it by type assertion and, without it, takes expired leases over without
// asking their owners.
type Replicas interface {
	// PutReplica records r (SeenAt is the store's now) and forgets the
	// replicas not seen for ReplicaRetention.
	PutReplica(ctx context.Context, r Replica) error
	// GetReplica returns the replica named id, or NotFound.
	GetReplica(ctx context.Context, id string) (Replica, error)
}

// ValidateReplica checks what PutReplica stores.
func ValidateReplica(r Replica) error {
	if r.ID == "" {
		return errdefs.Validationf("replica: empty id")
	}
	u, err := url.Parse(r.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errdefs.Validationf("replica %s: url %q is not an http(s) base URL", r.ID, r.URL)
	}
	return nil
}
