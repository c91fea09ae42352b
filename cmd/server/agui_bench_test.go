package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
)

// BenchmarkFaceStream compares the UI faces and the Agent Protocol with
// REST SSE on one run shape: the demo's echo agent streaming 200 tokens on memstore, read to
// the end over loopback by one client. Reports deltas/s, the process's
// CPU per delta (client and server share it; the client's part is alike
// in every face) and the first token's latency (request to first delta).
// -count interleaves the faces; compare medians:
//
//	go test -run '^$' -bench BenchmarkFaceStream -count 5 ./cmd/server/
//
// With AGENTD_BENCH_DATABASE_URL set, on that PostgreSQL database.
func BenchmarkFaceStream(b *testing.B) {
	faces := []struct {
		name  string
		path  func(i int) string
		body  func(i int) string
		delta string
		end   string
	}{
		{"rest", func(int) string { return "/v1/agents/echo/messages?stream=true" },
			func(int) string { return `{"text":"stream 200"}` }, "event: delta", "event: run.end"},
		{"rest-context", func(int) string { return "/v1/agents/echo/messages?stream=true" },
			func(i int) string {
				return fmt.Sprintf(`{"text":"stream 200","context_id":"bx-%d-%d"}`, time.Now().UnixNano(), i)
			}, "event: delta", "event: run.end"},
		{"agui", func(int) string { return "/ag-ui/agents/echo" },
			func(i int) string {
				return fmt.Sprintf(`{"threadId":"bt-%d-%d","runId":"br-%d-%d","messages":[{"id":"m","role":"user","content":"stream 200"}]}`, time.Now().UnixNano(), i, time.Now().UnixNano(), i)
			}, `"TEXT_MESSAGE_CONTENT"`, `"RUN_FINISHED"`},
		{"aisdk", func(int) string { return "/ai-sdk/agents/echo/chat" },
			func(i int) string {
				return fmt.Sprintf(`{"id":"bc-%d-%d","messages":[{"id":"u","role":"user","parts":[{"type":"text","text":"stream 200"}]}]}`, time.Now().UnixNano(), i)
			}, `"text-delta"`, "[DONE]"},
		// The Agent Protocol's stateless stream: its messages-tuple frames
		// end when the run does (no end frame: end never matches).
		{"lg", func(int) string { return "/lg/runs/stream" },
			func(int) string {
				return `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"stream 200"}]},"stream_mode":"messages-tuple"}`
			}, "event: messages", "\x00"},
	}
	// AGENTD_BENCH_DATABASE_URL runs the faces on PostgreSQL instead.
	env := map[string]string{"DATABASE_URL": os.Getenv("AGENTD_BENCH_DATABASE_URL")}
	for _, f := range faces {
		b.Run(f.name, func(b *testing.B) {
			s := startWithEnv(b, env)
			b.ReportAllocs()
			const tokens = 200
			var first time.Duration
			start, cpu0 := time.Now(), cpuTime()
			for i := range b.N {
				t0 := time.Now()
				res := post(b, s, "", f.path(i), f.body(i))
				n := 0
				br := bufio.NewReader(res.Body)
				for {
					line, err := br.ReadString('\n')
					if strings.Contains(line, f.delta) {
						if n == 0 {
							first += time.Since(t0)
						}
						n++
					}
					if err != nil || strings.Contains(line, f.end) {
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
			b.ReportMetric(float64(first.Microseconds())/float64(b.N), "first-token-µs")
		})
	}
}
