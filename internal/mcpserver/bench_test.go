package mcpserver_test

import (
	"fmt"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// BenchmarkStreamedEvents compares the server's cost per streamed event
// of an MCP call with progress (2026-07-28, raw HTTP: no SDK client in the
// measured process beyond reading bytes) with the REST face's stream of
// the same run (POST /v1/agents/echo/messages?stream=true): CPU time of
// the whole process per token, and the wall time of a run of 200 tokens.
func BenchmarkStreamedEvents(b *testing.B) {
	const tokens = 200
	e := newEnvB(b)
	msg := fmt.Sprintf("stream %d", tokens)
	for _, c := range []struct {
		name string
		req  func(base, msg string) (*http.Request, error)
		want string
	}{{"rest", restSend, "run.end"}, {"mcp", mcpCall, "tok" + fmt.Sprint(tokens) + `"}]`}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			cpu0 := cpuTime()
			for b.Loop() {
				req, err := c.req(e.base, msg)
				if err != nil {
					b.Fatal(err)
				}
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				body, err := io.ReadAll(res.Body)
				res.Body.Close()
				if err != nil || !strings.Contains(string(body), c.want) {
					b.Fatalf("%s: %d %v %.300s…", c.name, res.StatusCode, err, body)
				}
			}
			b.ReportMetric(float64(cpuTime()-cpu0)/float64(b.N*tokens), "cpu-ns/token")
		})
	}
}

// BenchmarkFirstToken is the time from a request to its first token on
// the wire: a REST streamed send's first delta, an MCP call's first
// progress notification with a token.
func BenchmarkFirstToken(b *testing.B) {
	e := newEnvB(b)
	for _, c := range []struct {
		name string
		req  func(base, msg string) (*http.Request, error)
	}{{"rest", restSend}, {"mcp", mcpCall}} {
		b.Run(c.name, func(b *testing.B) {
			var total time.Duration
			for b.Loop() {
				req, err := c.req(e.base, "stream 2")
				if err != nil {
					b.Fatal(err)
				}
				t0 := time.Now()
				res, err := http.DefaultClient.Do(req)
				if err != nil {
					b.Fatal(err)
				}
				var seen []byte
				buf := make([]byte, 4096)
				for !strings.Contains(string(seen), "tok1") {
					n, err := res.Body.Read(buf)
					seen = append(seen, buf[:n]...)
					if err != nil && !strings.Contains(string(seen), "tok1") {
						b.Fatalf("%s: no token in %.300s: %v", c.name, seen, err)
					}
				}
				total += time.Since(t0)
				_, _ = io.Copy(io.Discard, res.Body)
				res.Body.Close()
			}
			b.ReportMetric(float64(total.Microseconds())/float64(b.N), "µs-to-token")
		})
	}
}

// restSend is a REST streamed send of msg to echo.
func restSend(base, msg string) (*http.Request, error) {
	req, err := http.NewRequest(http.MethodPost, base+"/v1/agents/echo/messages?stream=true", strings.NewReader(`{"text":"`+msg+`"}`))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// mcpCall is a 2026-07-28 tools/call of echo with msg and a progress
// token, as the go-sdk client sends it.
func mcpCall(base, msg string) (*http.Request, error) {
	body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"message":"` + msg + `"},` +
		`"_meta":{"progressToken":1,"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}`
	req, err := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("Mcp-Protocol-Version", "2026-07-28")
		req.Header.Set("Mcp-Method", "tools/call")
		req.Header.Set("Mcp-Name", "echo")
	}
	return req, err
}

// cpuTime is the process's user and system CPU time.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
