package main

import (
	"context"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
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
	if !ok || store.IsVolatile(st) {
		return nil
	}
	return liveness.NewProbe(reg)
}

// serveLiveness answers the other replicas' probes ahead of h (and of its
// authentication) and, with a store replicas share, records in it how
// they reach this replica (replicaURL) until stop, which waits for it.
func serveLiveness(h http.Handler, st store.Store, rt *runtime.Runtime, cfg *config.Config, addr net.Addr, log *slog.Logger) (http.Handler, func()) {
	reg, ok := st.(store.Replicas)
	if !ok || store.IsVolatile(st) {
		return h, func() {}
	}
	me := replicaURL(cfg.Server.ReplicaURL, addr)
	self := func() store.Replica { return store.Replica{ID: rt.ReplicaID(), URL: me} }
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { liveness.Announce(ctx, reg, self, log) })
	return liveness.Handler(rt, h), func() { cancel(); wg.Wait() }
}

// replicaURL is the base URL the other replicas reach this one at:
// configured, else http:// and the listen address — with an unspecified
// host (0.0.0.0, ::) replaced by this machine's host name, which its peers
// on a network can resolve (a container's, in Docker Compose), or by
// loopback when it has none.
func replicaURL(configured string, addr net.Addr) string {
	if configured != "" {
		return strings.TrimSuffix(configured, "/")
	}
	host, port, err := net.SplitHostPort(addr.String())
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = "127.0.0.1"
		if name, err := os.Hostname(); err == nil && name != "" {
			host = name
		}
	}
	return "http://" + net.JoinHostPort(host, port)
}
