package a2a_test

import (
	"bufio"
	"bytes"
	"context"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// benchTokens is the length of the streamed answers of the stream
// benchmarks. a2a-go's default handler copies the whole task per event, so
// its rate falls as answers grow; at 2000 tokens it is ~200 events/s.
const benchTokens = 500

// BenchmarkStreamEvents measures streamed updates per second through the
// JSON-RPC binding: one SendStreamingMessage of benchTokens tokens per
// iteration, read as raw SSE so the client's parsing does not count.
func BenchmarkStreamEvents(b *testing.B) {
	e := newEnv(b)
	const tokens = benchTokens
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"stream ` + strconv.Itoa(tokens) + `"}]}}}`)
	b.ReportAllocs()
	events := 0
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", e.base+"/agents/echo/jsonrpc", bytes.NewReader(bytes.Replace(body, []byte("MID"), []byte("m"+strconv.Itoa(i)), 1)))
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		n := 0
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				n++
			}
		}
		resp.Body.Close()
		if n < tokens {
			b.Fatalf("%d events, want at least %d", n, tokens)
		}
		events += n
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}

// BenchmarkSendMessage measures blocking SendMessage round trips through the
// JSON-RPC binding with the echo agent.
func BenchmarkSendMessage(b *testing.B) {
	e := newEnv(b)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hello"}]},"configuration":{"historyLength":0}}}`)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		req, _ := http.NewRequest("POST", e.base+"/agents/echo/jsonrpc", bytes.NewReader(bytes.Replace(body, []byte("MID"), []byte("m"+strconv.Itoa(i)), 1)))
		req.Header.Set("A2A-Version", "1.0")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		out, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
			b.Fatalf("answer %s", out)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
}

// refExecutor is the same answer on a2a-go's default handler
// (in-memory task store and queues), for comparison with
// BenchmarkStreamEvents.
type refExecutor struct{ tokens int }

func (x refExecutor) Execute(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if !yield(a2a.NewSubmittedTask(ec, ec.Message), nil) ||
			!yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateWorking, nil), nil) {
			return
		}
		id := a2a.NewArtifactID()
		for i := 1; i <= x.tokens; i++ {
			ev := a2a.NewArtifactUpdateEvent(ec, id, a2a.NewTextPart("tok"+strconv.Itoa(i)+" "))
			ev.Append = i > 1
			if !yield(ev, nil) {
				return
			}
		}
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCompleted, nil), nil)
	}
}

func (refExecutor) Cancel(_ context.Context, ec *a2asrv.ExecutorContext) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		yield(a2a.NewStatusUpdateEvent(ec, a2a.TaskStateCanceled, nil), nil)
	}
}

// BenchmarkReferenceStreamEvents is BenchmarkStreamEvents against
// a2a-go's default request handler.
func BenchmarkReferenceStreamEvents(b *testing.B) {
	const tokens = benchTokens
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(refExecutor{tokens})))
	defer srv.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"go"}]}}}`)
	b.ReportAllocs()
	events := 0
	for i := 0; i < b.N; i++ {
		resp, err := http.Post(srv.URL, "application/json", bytes.NewReader(body))
		if err != nil {
			b.Fatal(err)
		}
		sc := bufio.NewScanner(resp.Body)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if strings.HasPrefix(sc.Text(), "data: ") {
				events++
			}
		}
		resp.Body.Close()
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
