package main

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"time"
)

// serveDebug serves Go's profiling endpoints (/debug/pprof/) on addr, which
// must be a loopback address: profiles expose the process's internals and
// the endpoints have no authentication. It returns a function that stops
// the listener.
func serveDebug(addr string, log *slog.Logger) (stop func(), err error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: --debug-addr %q: %v", errUsage, addr, err)
	}
	if !loopback(host) {
		return nil, fmt.Errorf("%w: --debug-addr %q: the profiling endpoints have no authentication; give a loopback address such as 127.0.0.1:6060", errUsage, addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on --debug-addr %s: %w", addr, err)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("debug listener", "err", err)
		}
	}()
	log.Info("profiling endpoints", "addr", ln.Addr().String())
	return func() { _ = srv.Close() }, nil
}
