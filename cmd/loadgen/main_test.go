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

	"go.uber.org/goleak"

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
	srv := httptest.NewServer(api.New(rt, api.Options{}).Handler())
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
		{"send", []string{"-mode", "send", "-c", "2", "-d", "5s", "-max-requests", "20"}, func(t *testing.T, r result) {
			if r.Requests != 20 || r.Latency == nil || r.Latency.Count != 20 {
				t.Errorf("got %d requests, latency %+v; want exactly -max-requests=20", r.Requests, r.Latency)
			}
		}},
		{"stream", []string{"-mode", "stream", "-c", "2", "-n", "50", "-d", "5s", "-max-requests", "4"}, func(t *testing.T, r result) {
			if r.Requests != 4 || r.Events != 200 || r.FirstDelta == nil {
				t.Errorf("got %d streams, %d events; want 4 streams of 50 deltas", r.Requests, r.Events)
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
