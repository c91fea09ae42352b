// Package push delivers push notifications: every update of a task a
// webhook asked for is POSTed to it, in order, at least once, from
// whichever replica holds the config's delivery claim. It owns the claim
// loop and one goroutine per claimed config (Deliverer.Run, follow.go),
// the batched cursor writes (saver.go), and the webhook client with its
// retries, backoff and circuit (send.go).
//
// A face decides what an update is in its protocol (Renderer: A2A's
// stream responses, or v0.3's Task) and sets the configs; push reads the
// run's log through the runtime and keeps configs, claims and cursors in
// its own narrow Store (store.PushConfigs, which memstore and pgstore
// implement).
//
// Goroutines: Run's claim loop, its cursor saver and one follower per
// claimed config (with a claim renewer while an attempt is under way);
// Run stops them all and waits for them when its ctx ends, handing the
// claims over.
//
// Imports: errdefs, netguard, run, runtime.
package push
