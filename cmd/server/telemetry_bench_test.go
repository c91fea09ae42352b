package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"agentd/internal/telemetry/otlptest"
)

// BenchmarkTracing measures what tracing costs a client: blocking sends
// and streamed tokens of the demo's echo agent on memstore, over loopback,
// with tracing off (no OTEL_* endpoint) and on (every span sampled and
// exported over OTLP/HTTP to a receiver in this process, which decodes
// each export). Run the modes interleaved (-count) and compare medians:
//
//	go test -run '^$' -bench BenchmarkTracing -count 5 ./cmd/server/
func BenchmarkTracing(b *testing.B) {
	rcv := otlptest.New(false)
	defer rcv.Close()
	modes := []struct {
		name string
		env  map[string]string
	}{
		{"off", nil},
		{"on", map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL()}},
	}
	for _, m := range modes {
		b.Run(m.name+"/send", func(b *testing.B) { benchSend(b, startWithEnv(b, m.env)) })
		b.Run(m.name+"/stream", func(b *testing.B) { benchStream(b, startWithEnv(b, m.env)) })
	}
	b.Logf("spans received: %d", rcv.Count())
}

// benchSend: blocking sends from 8 clients; reports sends/s.
func benchSend(b *testing.B, s *server) {
	b.ReportAllocs()
	b.SetParallelism(4) // × GOMAXPROCS (2 here): 8 clients
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res := post(b, s, "/v1/agents/echo/messages", `{"text":"hello world"}`)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("send: %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
}

// benchStream: each op streams 200 tokens to the end; reports deltas/s.
func benchStream(b *testing.B, s *server) {
	b.ReportAllocs()
	const tokens = 200
	start := time.Now()
	for range b.N {
		res := post(b, s, "/v1/agents/echo/messages?stream=true", `{"text":"stream 200"}`)
		n := 0
		br := bufio.NewReader(res.Body)
		for {
			line, err := br.ReadString('\n')
			if strings.HasPrefix(line, "event: delta") {
				n++
			}
			if err != nil || strings.HasPrefix(line, "event: run.end") {
				break
			}
		}
		res.Body.Close()
		if n != tokens {
			b.Fatalf("%d deltas, want %d", n, tokens)
		}
	}
	b.ReportMetric(float64(b.N*tokens)/time.Since(start).Seconds(), "deltas/s")
}

func post(b *testing.B, s *server, path, body string) *http.Response {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := s.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return res
}
