package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"sync"

	"agentd/internal/config"
	"agentd/internal/liveness"
	"agentd/internal/runtime"
	"agentd/internal/store"
)

// ownerProbe is how the runtime asks a lease's owner whether it still
// executes a run (liveness): with a store replicas share, else none.
func ownerProbe(st store.Store) runtime.OwnerProbe {
	reg, ok := st.(store.Replicas)
	if !ok || volatileStore(st) {
		return nil
	}
	return liveness.NewProbe(reg)
}

// serveLiveness answers the other replicas' probes ahead of h (and of its
// authentication) and, with a store replicas share, records in it how
// they reach this replica — server.replica_url, else the listen address —
// until stop, which waits for it.
func serveLiveness(h http.Handler, st store.Store, rt *runtime.Runtime, cfg *config.Config, addr net.Addr, log *slog.Logger) (http.Handler, func()) {
	reg, ok := st.(store.Replicas)
	if !ok || volatileStore(st) {
		return h, func() {}
	}
	var me selfURL
	me.set(cfg.Server.ReplicaURL, addr)
	self := func() store.Replica { return store.Replica{ID: rt.ReplicaID(), URL: me.get()} }
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { liveness.Announce(ctx, reg, self, log) })
	return liveness.Handler(rt, h), func() { cancel(); wg.Wait() }
}
