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
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2asrv"
)

// benchTokens is the length of the streamed answers of the stream
// benchmarks, "stream 100" as issue 4 measures. a2a-go's default handler
// copies the whole task per event, so its rate falls as answers grow (at
// 2000 tokens it is ~200 events/s).
const benchTokens = 100

// readStream posts body and counts the SSE data lines of the answer; it
// also returns the time to the first one.
func readStream(b *testing.B, url string, body []byte, version string) (int, time.Duration) {
	start := time.Now()
	req, _ := http.NewRequest("POST", url, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	if version != "" {
		req.Header.Set("A2A-Version", version)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	defer resp.Body.Close()
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	n := 0
	var first time.Duration
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "data: ") {
			if n == 0 {
				first = time.Since(start)
			}
			n++
		}
	}
	return n, first
}

// streamBench runs one streaming request per iteration and reports
// events/s and the mean time to the first event.
func streamBench(b *testing.B, url, version string, body func(i int) []byte) {
	b.ReportAllocs()
	events := 0
	var firsts time.Duration
	cpu := cpuTime()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		n, first := readStream(b, url, body(i), version)
		if n < benchTokens {
			b.Fatalf("%d events, want at least %d", n, benchTokens)
		}
		events += n
		firsts += first
	}
	reportCPU(b, cpu, events, "cpu-µs/event")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(firsts.Microseconds())/float64(b.N), "µs-to-first-event")
}

// BenchmarkStreamEvents measures streamed updates per second through the
// JSON-RPC binding: one SendStreamingMessage of benchTokens tokens per
// iteration, read as raw SSE so the client's parsing does not count.
func BenchmarkStreamEvents(b *testing.B) {
	e := newEnv(b)
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"stream ` + strconv.Itoa(benchTokens) + `"}]}}}`)
	streamBench(b, e.base+"/agents/echo/jsonrpc", "1.0", func(i int) []byte {
		return bytes.Replace(body, []byte("MID"), []byte("m"+strconv.Itoa(i)), 1)
	})
}

// BenchmarkReferenceStreamEvents is BenchmarkStreamEvents against
// a2a-go's default request handler (in-memory task store and queues).
func BenchmarkReferenceStreamEvents(b *testing.B) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(refExecutor{benchTokens})))
	defer srv.Close()
	body := []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"go"}]}}}`)
	streamBench(b, srv.URL, "1.0", func(i int) []byte {
		return bytes.Replace(body, []byte("MID"), []byte("m"+strconv.Itoa(i)), 1)
	})
}

// sendBench runs blocking SendMessage round trips in parallel and reports
// sends/s.
func sendBench(b *testing.B, url string, body []byte) {
	var seq atomic.Int64
	b.ReportAllocs()
	cpu := cpuTime()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			id := strconv.FormatInt(seq.Add(1), 10)
			req, _ := http.NewRequest("POST", url, bytes.NewReader(bytes.Replace(body, []byte("MID"), []byte("m"+id), 1)))
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("A2A-Version", "1.0")
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				b.Error(err)
				return
			}
			out, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if !bytes.Contains(out, []byte("TASK_STATE_COMPLETED")) {
				b.Errorf("answer %s", out)
				return
			}
		}
	})
	reportCPU(b, cpu, b.N, "cpu-µs/send")
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
}

// cpuTime is the CPU time the process (server and client) has used: on a
// machine busy with other work it measures a change far more steadily
// than ns/op.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time used since start per one of n units.
func reportCPU(b *testing.B, start time.Duration, n int, unit string) {
	if n > 0 {
		b.ReportMetric(float64((cpuTime()-start).Microseconds())/float64(n), unit)
	}
}

const sendBody = `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hello"}]},"configuration":{"historyLength":0}}}`

// BenchmarkSendMessage measures blocking SendMessage round trips through the
// JSON-RPC binding with the echo agent.
func BenchmarkSendMessage(b *testing.B) {
	e := newEnv(b)
	sendBench(b, e.base+"/agents/echo/jsonrpc", []byte(sendBody))
}

// BenchmarkSendMessageHistory is BenchmarkSendMessage with the body
// cmd/loadgen sends: no configuration, so the Task answered carries the
// default history.
func BenchmarkSendMessageHistory(b *testing.B) {
	e := newEnv(b)
	sendBench(b, e.base+"/agents/echo/jsonrpc",
		[]byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"MID","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}`))
}

// BenchmarkReferenceSendMessage is BenchmarkSendMessage against a2a-go's
// default request handler with an executor that echoes the text.
func BenchmarkReferenceSendMessage(b *testing.B) {
	srv := httptest.NewServer(a2asrv.NewJSONRPCHandler(a2asrv.NewHandler(refExecutor{1})))
	defer srv.Close()
	sendBench(b, srv.URL, []byte(sendBody))
}

// refExecutor streams tokens answers on a2a-go's default handler, for
// comparison with agentd's echo agent.
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
