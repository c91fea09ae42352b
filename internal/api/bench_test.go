package api

// Benchmarks of the REST + SSE face over a real loopback listener, with the
// demo configuration's echo agent on memstore: the in-process counterpart
// of cmd/loadgen's send and stream modes.

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"agentd/internal/config"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
)

// benchOptions runs the runtime as cmd/server runs it on memstore: a
// volatile store (events shown before they are stored) with its 50 ms
// flush window.
func benchOptions(agents []*runtime.Agent) runtime.Options {
	return runtime.Options{Store: memstore.New(), Agents: agents, FlushWindow: 50 * time.Millisecond}
}

// newBenchServer serves the demo agents on loopback.
func newBenchServer(b *testing.B) (string, *http.Client) {
	b.Helper()
	cfg, err := config.Load("")
	if err != nil {
		b.Fatal(err)
	}
	agents, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := runtime.New(benchOptions(agents))
	if err != nil {
		b.Fatal(err)
	}
	srv := httptest.NewServer(New(rt, Options{}).Handler())
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64, DisableCompression: true}}
	b.Cleanup(func() {
		client.CloseIdleConnections()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
		srv.Close()
	})
	return srv.URL, client
}

// benchPost posts body to url and returns the answer's body.
func benchPost(b *testing.B, client *http.Client, url, body string) []byte {
	resp, err := client.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	if err != nil || resp.StatusCode != http.StatusOK {
		b.Fatalf("POST %s: %s %s (%v)", url, resp.Status, out, err)
	}
	return out
}

// BenchmarkBlockingSend is POST /v1/agents/echo/messages {"text":"hello
// world"} answered when the run completed (client and server share the
// process, so both sides' costs are in the figure).
func BenchmarkBlockingSend(b *testing.B) {
	for _, parallel := range []bool{false, true} {
		name := "serial"
		if parallel {
			name = "parallel"
		}
		b.Run(name, func(b *testing.B) {
			base, client := newBenchServer(b)
			url := base + "/v1/agents/echo/messages"
			const body = `{"text":"hello world"}`
			b.ReportAllocs()
			start := time.Now()
			if parallel {
				b.SetParallelism(8)
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						benchPost(b, client, url, body)
					}
				})
			} else {
				for b.Loop() {
					benchPost(b, client, url, body)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "req/s")
		})
	}
}

// BenchmarkSSEStream is POST …/messages?stream=true {"text":"stream 1000"}
// read to run.end: one op is one streamed run of 1000 deltas.
func BenchmarkSSEStream(b *testing.B) {
	base, client := newBenchServer(b)
	url := base + "/v1/agents/echo/messages?stream=true"
	deltaLine := []byte("event: delta")
	b.ReportAllocs()
	var deltas int64
	br := bufio.NewReaderSize(nil, 32<<10)
	for b.Loop() {
		resp, err := client.Post(url, "application/json", strings.NewReader(`{"text":"stream 1000"}`))
		if err != nil {
			b.Fatal(err)
		}
		br.Reset(resp.Body)
		n := 0
		for {
			line, err := br.ReadSlice('\n')
			if bytes.HasPrefix(line, deltaLine) {
				n++
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		if n != 1000 {
			b.Fatalf("stream delivered %d deltas, want 1000", n)
		}
		deltas += int64(n)
	}
	b.ReportMetric(float64(deltas)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkBlockingSendHandler is BenchmarkBlockingSend without the
// network: the handler served in-process, so the figure is agentd's own
// cost per blocking send (decode, submit, run, commit, answer).
func BenchmarkBlockingSendHandler(b *testing.B) {
	cfg, err := config.Load("")
	if err != nil {
		b.Fatal(err)
	}
	agents, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		b.Fatal(err)
	}
	rt, err := runtime.New(benchOptions(agents))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	h := New(rt, Options{}).Handler()
	const body = `{"text":"hello world"}`
	b.ReportAllocs()
	for b.Loop() {
		req := httptest.NewRequest(http.MethodPost, "/v1/agents/echo/messages", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
}
