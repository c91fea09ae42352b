package liveness

import (
	"context"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/errdefs"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// runs is a replica named id executing the runs in executing.
type runs struct {
	id        string
	executing map[string]bool
}

func (r runs) ReplicaID() string          { return r.id }
func (r runs) Executes(runID string) bool { return r.executing[runID] }

// replicaServer serves probes as replica id executing run "r1", and
// answers 418 to every other path.
func replicaServer(t *testing.T, id string) *httptest.Server {
	t.Helper()
	next := http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusTeapot) })
	srv := httptest.NewServer(Handler(runs{id: id, executing: map[string]bool{"r1": true}}, next))
	t.Cleanup(srv.Close)
	return srv
}

func TestProbeAsksTheOwner(t *testing.T) {
	ctx := t.Context()
	reg := memstore.New()
	srv := replicaServer(t, "A")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	gone := "http://" + ln.Addr().String()
	ln.Close()
	for _, r := range []store.Replica{{ID: "A", URL: srv.URL}, {ID: "old", URL: srv.URL}, {ID: "dead", URL: gone}} {
		if err := reg.PutReplica(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	p := NewProbe(reg)
	t.Cleanup(p.Client.CloseIdleConnections)
	for _, tc := range []struct {
		owner, run string
		want       bool
		wantErr    func(error) bool
	}{
		{"A", "r1", true, nil},
		{"A", "r2", false, nil},
		{"unknown", "r1", false, errdefs.IsNotFound},
		{"old", "r1", false, errdefs.IsNotAvailable}, // its address now serves A
		{"dead", "r1", false, errdefs.IsNotAvailable},
	} {
		got, err := p.Executes(ctx, tc.owner, tc.run)
		switch {
		case tc.wantErr == nil && err != nil:
			t.Errorf("Executes(%s, %s): %v", tc.owner, tc.run, err)
		case tc.wantErr != nil && !tc.wantErr(err):
			t.Errorf("Executes(%s, %s): error %v, want another class", tc.owner, tc.run, err)
		case got != tc.want:
			t.Errorf("Executes(%s, %s) = %v, want %v", tc.owner, tc.run, got, tc.want)
		}
	}
}

func TestHandlerPassesOtherRequests(t *testing.T) {
	srv := replicaServer(t, "A")
	for path, want := range map[string]int{"/v1/runs/r1": http.StatusTeapot, Path + "r1": http.StatusOK, Path + "a/b": http.StatusBadRequest} {
		res, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		if res.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, res.StatusCode, want)
		}
	}
}

// TestAnnounceRecordsTheReplica: Announce waits for the URL, records it,
// and returns when its context ends.
func TestAnnounceRecordsTheReplica(t *testing.T) {
	reg := memstore.New()
	var url atomic.Value
	url.Store("")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		Announce(ctx, reg, func() store.Replica { return store.Replica{ID: "A", URL: url.Load().(string)} }, slog.New(slog.DiscardHandler))
	})
	defer func() { cancel(); wg.Wait() }()
	url.Store("http://127.0.0.1:1")
	deadline := time.Now().Add(5 * time.Second)
	for {
		r, err := reg.GetReplica(t.Context(), "A")
		if err == nil && r.URL == "http://127.0.0.1:1" {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica not recorded: %+v, %v", r, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
