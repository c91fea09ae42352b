package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/goleak"

	"agentd/internal/a2a"
	"agentd/internal/api"
	agentconfig "agentd/internal/config"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// startAgentd serves the demo configuration in-process on loopback.
func startAgentd(t *testing.T) string {
	t.Helper()
	cfg, err := agentconfig.Load("")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := cfg.Build(agentconfig.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := runtime.New(runtime.Options{Store: memstore.New(), Agents: agents, CancelGrace: 200 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	a2aSrv, err := a2a.New(rt, a2a.Options{})
	if err != nil {
		t.Fatal(err)
	}
	router := chi.NewRouter()
	a2aSrv.Mount(router)
	router.Mount("/", api.New(rt, api.Options{}).Handler())
	srv := httptest.NewServer(router)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
		srv.CloseClientConnections()
		srv.Close()
	})
	return srv.URL
}

func runJSON(t *testing.T, args ...string) result {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := run(ctx, append(args, "-json"), &out, &errOut); err != nil {
		t.Fatalf("loadgen %v: %v (%s)", args, err, errOut.String())
	}
	var res result
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatalf("loadgen %v printed %q: %v", args, out.String(), err)
	}
	return res
}

func TestModesAgainstAgentd(t *testing.T) {
	target := startAgentd(t)
	pid := strconv.Itoa(os.Getpid())
	tests := []struct {
		name  string
		args  []string
		check func(t *testing.T, r result)
	}{
		{"send", []string{"-mode", "send", "-c", "2", "-d", "5s", "-max-requests", "20", "-server-pid", pid}, func(t *testing.T, r result) {
			if r.Requests != 20 || r.Latency == nil || r.Latency.Count != 20 {
				t.Errorf("got %d requests, latency %+v; want exactly -max-requests=20", r.Requests, r.Latency)
			}
			if r.ServerCPUSec < 0 || r.ServerBusy < 0 {
				t.Errorf("server CPU %v s, busy %v: negative", r.ServerCPUSec, r.ServerBusy)
			}
		}},
		{"stream", []string{"-mode", "stream", "-c", "2", "-n", "50", "-d", "5s", "-max-requests", "4"}, func(t *testing.T, r result) {
			if r.Requests != 4 || r.Events != 200 || r.FirstDelta == nil {
				t.Errorf("got %d streams, %d events; want 4 streams of 50 deltas", r.Requests, r.Events)
			}
		}},
		{"a2a send", []string{"-proto", "a2a", "-mode", "send", "-c", "2", "-d", "5s", "-max-requests", "12"}, func(t *testing.T, r result) {
			if r.Proto != "a2a" || r.Requests != 12 || r.Latency == nil || r.Latency.Count != 12 {
				t.Errorf("got %s: %d requests, latency %+v; want 12 A2A sends", r.Proto, r.Requests, r.Latency)
			}
		}},
		{"a2a stream", []string{"-proto", "a2a", "-mode", "stream", "-c", "2", "-n", "30", "-d", "5s", "-max-requests", "4"}, func(t *testing.T, r result) {
			if r.Proto != "a2a" || r.Requests != 4 || r.Events != 120 || r.FirstDelta == nil {
				t.Errorf("got %s: %d streams, %d events; want 4 A2A streams of 30 deltas", r.Proto, r.Requests, r.Events)
			}
		}},
		{"latency", []string{"-mode", "latency", "-c", "2", "-n", "5", "-every", "2ms", "-d", "5s", "-max-requests", "2"}, func(t *testing.T, r result) {
			if r.DeltaToSocket == nil || r.DeltaToSocket.Count != 10 {
				t.Errorf("delta-to-socket sample %+v, want 10 deltas", r.DeltaToSocket)
			}
		}},
		{"idle", []string{"-mode", "idle", "-c", "5", "-d", "5s", "-settle", "0s", "-server-pid", pid}, func(t *testing.T, r result) {
			if r.Requests != 5 || r.RSSAfterKiB == 0 {
				t.Errorf("got %d streams, RSS %d KiB; want 5 streams and an RSS reading", r.Requests, r.RSSAfterKiB)
			}
		}},
		{"idle parked", []string{"-mode", "idle", "-parked", "-c", "3", "-d", "5s", "-settle", "0s"}, func(t *testing.T, r result) {
			if r.Requests != 3 {
				t.Errorf("got %d streams, want 3", r.Requests)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := runJSON(t, append([]string{"-target", target}, tt.args...)...)
			if r.Errors != 0 {
				t.Fatalf("%d errors, first: %s", r.Errors, r.FirstError)
			}
			tt.check(t, r)
		})
	}
}

func TestRefusesBadFlags(t *testing.T) {
	tests := [][]string{
		{"-target", "http://10.1.2.3:8080"},
		{"-target", "http://example.com"},
		{"-target", "https://127.0.0.1:1"},
		{"-mode", "flood"},
		{"-c", "0"},
		{"-d", "0s"},
		{"-every", "0s"},
		{"-proto", "grpc"},
		{"-proto", "a2a", "-mode", "latency"},
		{"-proto", "a2a", "-baseline"},
	}
	for _, args := range tests {
		var out, errOut bytes.Buffer
		if err := run(context.Background(), args, &out, &errOut); err == nil {
			t.Errorf("loadgen %v: no error, want one", args)
		}
	}
}

func TestSSEScanner(t *testing.T) {
	in := ": stream open\n\nid: 1\nevent: delta\ndata: {\"time\":\"2026-01-02T03:04:05.123456789Z\",\"text\":\"a\"}\n\n" +
		"event: run.end\ndata: {\"x\":\n" + "data: " + strings.Repeat("y", 100) + "}\n\n"
	sc := sseScanner{r: bufio.NewReaderSize(strings.NewReader(in), 16)}
	typ, data, err := sc.next()
	if err != nil || typ != "delta" {
		t.Fatalf("first event %q %s %v, want a delta", typ, data, err)
	}
	at, err := eventTime(data)
	if err != nil || at.Nanosecond() != 123456789 {
		t.Fatalf("time %v %v, want …05.123456789", at, err)
	}
	typ, data, err = sc.next()
	if err != nil || typ != "run.end" || !bytes.HasPrefix(data, []byte("{\"x\":\nyyy")) {
		t.Fatalf("second event %q %q %v, want run.end with two data lines", typ, data, err)
	}
	if _, _, err := sc.next(); err == nil {
		t.Fatal("no error at the end of the stream")
	}
}

func TestSummarise(t *testing.T) {
	var sample []time.Duration
	for i := 100; i >= 1; i-- {
		sample = append(sample, time.Duration(i)*time.Millisecond)
	}
	p := summarise(sample)
	if p.Count != 100 || p.P50 != 50 || p.P90 != 90 || p.P99 != 99 || p.Max != 100 {
		t.Fatalf("percentiles %+v, want 50/90/99/100 ms", p)
	}
	if summarise(nil) != nil {
		t.Fatal("an empty sample has percentiles")
	}
}

func TestParseCPU(t *testing.T) {
	// utime 150 and stime 50 ticks, after a command name with ") " in it.
	line := "4242 (a) b (c)) S 1 4242 4242 0 -1 4194560 100 0 0 0 150 50 0 0 20 0 5 0 99 0 0\n"
	cpu, err := parseCPU([]byte(line))
	if err != nil || cpu != 2*time.Second {
		t.Fatalf("parseCPU = %v, %v; want 2s", cpu, err)
	}
	for _, bad := range []string{"", "4242 comm S 1", "4242 (x) S 1 2 3", "4242 (x) S 1 2 3 4 5 6 7 8 9 10 u 5"} {
		if _, err := parseCPU([]byte(bad)); err == nil {
			t.Errorf("parseCPU(%q): no error", bad)
		}
	}
}

// TestReadCPUCountsWork checks readCPU against this process: burning CPU
// must show up (to the 10 ms resolution of the kernel's counters).
func TestReadCPUCountsWork(t *testing.T) {
	before, err := readCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	x := 1
	for time.Now().Before(deadline) {
		for i := range 1_000_000 {
			x = x*31 + i
		}
		now, err := readCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now >= before+50*time.Millisecond {
			return
		}
	}
	t.Fatalf("readCPU did not advance by 50ms of busy work (%d)", x)
}

func TestServerCPU(t *testing.T) {
	send := result{Mode: "send", ElapsedSec: 4, Requests: 80_000}
	send.serverCPU(2 * time.Second)
	if send.ServerCPUSec != 2 || send.ServerBusy != 0.5 || send.ServerCPUPer != 25 {
		t.Errorf("send: %v s, busy %v, %v µs per request; want 2 s, 0.5, 25", send.ServerCPUSec, send.ServerBusy, send.ServerCPUPer)
	}
	stream := result{Mode: "stream", ElapsedSec: 2, Requests: 8, Events: 400_000}
	stream.serverCPU(2 * time.Second)
	if stream.ServerBusy != 1 || stream.ServerCPUPer != 5 {
		t.Errorf("stream: busy %v, %v µs per event; want 1, 5 (per delta event, not per stream)", stream.ServerBusy, stream.ServerCPUPer)
	}
}
