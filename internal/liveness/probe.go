package liveness

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Path is where a replica answers probes: Path + a run id.
const Path = "/internal/replica/runs/"

// answer is a replica's answer to a probe.
type answer struct {
	// Replica is the answering replica's name: an address reused by a new
	// process answers under another name than the lease's owner.
	Replica  string `json:"replica"`
	Executes bool   `json:"executes"`
}

// Runs is what a replica answers probes from (runtime.Runtime).
type Runs interface {
	ReplicaID() string
	Executes(runID string) bool
}

// Handler answers probes at Path from rt and passes every other request
// to next.
func Handler(rt Runs, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		runID, ok := strings.CutPrefix(req.URL.Path, Path)
		if !ok {
			next.ServeHTTP(w, req)
			return
		}
		if req.Method != http.MethodGet || runID == "" || strings.Contains(runID, "/") {
			http.Error(w, "GET "+Path+"{run id}", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		_ = json.NewEncoder(w).Encode(answer{Replica: rt.ReplicaID(), Executes: rt.Executes(runID)})
	})
}

// Probe asks owners over HTTP at the URL they recorded (runtime.OwnerProbe).
type Probe struct {
	Replicas store.Replicas
	// Client makes the requests (default: one without proxies); the
	// caller's context bounds each.
	Client *http.Client
}

// NewProbe is a Probe over reg with a client of its own, which keeps no
// connection open: probes are rare (an expired lease), and an idle
// connection would outlive the runtime that made it.
func NewProbe(reg store.Replicas) *Probe {
	return &Probe{Replicas: reg, Client: &http.Client{Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true}}}
}

// Executes asks replica owner whether it executes run runID. An error
// means no answer from owner: unknown, unreachable, a failed request, or
// another process at its address.
func (p *Probe) Executes(ctx context.Context, owner, runID string) (bool, error) {
	rep, err := p.Replicas.GetReplica(ctx, owner)
	if err != nil {
		return false, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(rep.URL, "/")+Path+url.PathEscape(runID), nil)
	if err != nil {
		return false, errdefs.Validationf("replica %s: url %q: %v", owner, rep.URL, err)
	}
	res, err := p.Client.Do(req)
	if err != nil {
		return false, errdefs.NotAvailablef("replica %s does not answer: %w", owner, err)
	}
	defer res.Body.Close()
	var a answer
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, io.LimitReader(res.Body, 4096))
		return false, errdefs.NotAvailablef("replica %s answers the probe with status %d", owner, res.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, 4096)).Decode(&a); err != nil {
		return false, errdefs.NotAvailablef("replica %s: unreadable probe answer: %w", owner, err)
	}
	if a.Replica != owner {
		return false, errdefs.NotAvailablef("replica %s's address is now served by replica %q", owner, a.Replica)
	}
	return a.Executes, nil
}

// AnnounceEvery is how often a replica records itself again.
const AnnounceEvery = time.Minute

// Announce records self in reg at once (retrying every second until it
// succeeds) and every AnnounceEvery after, until ctx ends. self is read
// each time: the URL may be known only once the server listens.
func Announce(ctx context.Context, reg store.Replicas, self func() store.Replica, log *slog.Logger) {
	wait := time.Duration(0)
	for {
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		r := self()
		if r.URL == "" {
			wait = 100 * time.Millisecond
			continue
		}
		if err := reg.PutReplica(ctx, r); err != nil {
			if ctx.Err() == nil {
				log.Warn("replica could not record how the others reach it; will retry", "err", err)
			}
			wait = time.Second
			continue
		}
		wait = AnnounceEvery
	}
}
