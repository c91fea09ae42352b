package main

import (
	"bufio"
	"context"
	"io"
	"net/http"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentd/internal/config"
	"agentd/internal/telemetry/otlptest"
)

// BenchmarkTracing measures what tracing and authentication cost a
// client: blocking sends and streamed tokens of the demo's echo agent on
// memstore, over loopback, with tracing off (no OTEL_* endpoint), on
// (every span sampled and exported over OTLP/HTTP to a receiver in this
// process, which decodes each export), and with authentication (an API
// key in X-API-Key, tracing off). -count repeats the three modes in turn,
// so they are interleaved; compare medians:
//
//	go test -run '^$' -bench BenchmarkTracing -count 5 ./cmd/server/
func BenchmarkTracing(b *testing.B) {
	rcv := otlptest.New(false)
	defer rcv.Close()
	modes := []struct {
		name, key string
		env       map[string]string
		auth      bool
	}{
		{name: "off"},
		{name: "on", env: map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": rcv.URL()}},
		{name: "auth", key: acmeKey, env: authEnv, auth: true},
	}
	for _, m := range modes {
		start := func(b *testing.B) *server {
			if !m.auth {
				return startWithEnv(b, m.env)
			}
			return startWithEnv(b, m.env, "--config", authConfig(b))
		}
		b.Run(m.name+"/send", func(b *testing.B) { benchSend(b, start(b), m.key) })
		b.Run(m.name+"/stream", func(b *testing.B) { benchStream(b, start(b), m.key) })
	}
	b.Logf("spans received: %d", rcv.Count())
}

// benchSend: blocking sends from 8 clients; reports sends/s.
func benchSend(b *testing.B, s *server, key string) {
	b.ReportAllocs()
	b.SetParallelism(4) // × GOMAXPROCS (2 here): 8 clients
	start, cpu0 := time.Now(), cpuTime()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			res := post(b, s, key, "/v1/agents/echo/messages", `{"text":"hello world"}`)
			_, _ = io.Copy(io.Discard, res.Body)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				b.Errorf("send: %d", res.StatusCode)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N)/1e3, "cpu-µs/send")
}

// benchStream: each op streams 200 tokens to the end; reports deltas/s.
func benchStream(b *testing.B, s *server, key string) {
	b.ReportAllocs()
	const tokens = 200
	start, cpu0 := time.Now(), cpuTime()
	for range b.N {
		res := post(b, s, key, "/v1/agents/echo/messages?stream=true", `{"text":"stream 200"}`)
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
	b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*tokens)/1e3, "cpu-µs/delta")
}

// authConfig is the demo configuration with authYAML's keys.
func authConfig(b *testing.B) string {
	path, err := config.WriteDemo(b.TempDir(), nil)
	if err != nil {
		b.Fatal(err)
	}
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0) // beside the demo's flow files
	if err == nil {
		_, err = f.WriteString(authYAML)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// post sends body, with key in X-API-Key when it is set.
func post(b *testing.B, s *server, key, path, body string) *http.Response {
	req, err := http.NewRequestWithContext(context.Background(), http.MethodPost, s.base+path, strings.NewReader(body))
	if err != nil {
		b.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("X-API-Key", key)
	}
	res, err := s.client.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// cpuTime is the CPU time this process has used (user and system), in
// nanoseconds: server and client share the process, and the client's part
// is the same in every mode, so the difference between modes is what the
// server pays. Less sensitive than rates to the other work on the machine.
func cpuTime() int64 {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}
