package runtime

// Benchmarks of the runtime alone (no HTTP): the cost of a run's life cycle
// on memstore, of live fan-out to concurrent readers, and of replay. The
// load figures over HTTP are in docs/benchmarks.md (cmd/loadgen).

import (
	"context"
	"errors"
	"fmt"
	"io"
	goruntime "runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
	"agentd/internal/store/memstore"
)

// newBenchRuntime is a runtime on memstore with the default flush window.
func newBenchRuntime(b *testing.B, agents ...*Agent) *Runtime {
	b.Helper()
	r, err := New(Options{Store: memstore.New(), Agents: agents})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
		defer cancel()
		_ = r.Shutdown(ctx)
	})
	return r
}

// answerer answers every message with one assistant message and publishes
// nothing itself: the smallest run the runtime can host.
func answerer() engine.Engine {
	return engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "ok"))
		return b, nil
	})
}

// burst publishes n token deltas as fast as it can, then answers with their
// concatenation.
func burst(n int) engine.Engine {
	toks := make([]string, n)
	for i := range toks {
		toks[i] = fmt.Sprintf(" tok%d", i+1)
	}
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		var sb strings.Builder
		for _, tok := range toks {
			if err := h.Publish(ctx, engine.Token{Actor: "bench", Text: tok}); err != nil {
				return b, err
			}
			sb.WriteString(tok)
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, sb.String()))
		return b, nil
	})
}

func sendWait(ctx context.Context, b *testing.B, r *Runtime, agentID, text string) string {
	sub, err := r.Send(ctx, SendRequest{AgentID: agentID, Message: model.NewText(model.RoleUser, text)})
	if err != nil {
		b.Fatal(err)
	}
	if _, err := r.Wait(ctx, sub.Task.ID); err != nil {
		b.Fatal(err)
	}
	return sub.Task.ID
}

// BenchmarkSendWait is one blocking send: create the task, run the engine,
// commit the answer and the terminal state, return.
func BenchmarkSendWait(b *testing.B) {
	b.Run("serial", func(b *testing.B) {
		r := newBenchRuntime(b, testAgent("a", answerer()))
		ctx := context.Background()
		b.ReportAllocs()
		for b.Loop() {
			sendWait(ctx, b, r, "a", "hello world")
		}
		b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
	})
	b.Run("parallel", func(b *testing.B) {
		r := newBenchRuntime(b, testAgent("a", answerer()))
		ctx := context.Background()
		b.ReportAllocs()
		b.SetParallelism(8)
		start := time.Now()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				sendWait(ctx, b, r, "a", "hello world")
			}
		})
		b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "sends/s")
	})
}

// drain reads a run's stream to its end the way the SSE handler does and
// returns how many events it saw.
func drain(ctx context.Context, r *Runtime, runID string) (int, error) {
	st, err := r.OpenStream(ctx, runID, 0)
	if err != nil {
		return 0, err
	}
	defer st.Close()
	n := 0
	for {
		evs, err := st.Next(ctx, 512, time.Minute)
		if errors.Is(err, io.EOF) {
			return n, nil
		}
		if err != nil {
			return n, err
		}
		n += len(evs)
	}
}

// mallocs reads the process's allocation count (stops the world briefly;
// called once before and once after the timed loop).
func mallocs() uint64 {
	var ms goruntime.MemStats
	goruntime.ReadMemStats(&ms)
	return ms.Mallocs
}

// BenchmarkLiveStream is a run publishing 10k deltas read live by 1 and by
// 100 concurrent readers; one op is one whole run.
func BenchmarkLiveStream(b *testing.B) {
	const deltas = 10_000
	for _, readers := range []int{1, 100} {
		b.Run(fmt.Sprintf("readers=%d", readers), func(b *testing.B) {
			r := newBenchRuntime(b, testAgent("s", burst(deltas)))
			ctx := context.Background()
			b.ReportAllocs()
			var events int64
			m0 := mallocs()
			for b.Loop() {
				sub, err := r.Send(ctx, SendRequest{AgentID: "s", Message: model.NewText(model.RoleUser, "go")})
				if err != nil {
					b.Fatal(err)
				}
				var wg sync.WaitGroup
				counts := make([]int, readers)
				errs := make([]error, readers)
				for i := range readers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						counts[i], errs[i] = drain(ctx, r, sub.Task.ID)
					}()
				}
				wg.Wait()
				for i := range readers {
					if errs[i] != nil || counts[i] < deltas {
						b.Fatalf("reader %d saw %d events (%v), want at least %d", i, counts[i], errs[i], deltas)
					}
					events += int64(counts[i])
				}
			}
			m1 := mallocs()
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(m1-m0)/float64(events), "allocs/event")
		})
	}
}

// BenchmarkReplay reads a finished run of 10k events from the beginning:
// the time to the first batch, and to the end.
func BenchmarkReplay(b *testing.B) {
	r := newBenchRuntime(b, testAgent("s", burst(10_000)))
	ctx := context.Background()
	runID := sendWait(ctx, b, r, "s", "go")
	b.ReportAllocs()
	var first time.Duration
	var events int64
	for b.Loop() {
		t0 := time.Now()
		st, err := r.OpenStream(ctx, runID, 0)
		if err != nil {
			b.Fatal(err)
		}
		for batch := 0; ; batch++ {
			evs, err := st.Next(ctx, 512, time.Minute)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				b.Fatal(err)
			}
			if batch == 0 {
				first += time.Since(t0)
			}
			events += int64(len(evs))
		}
		st.Close()
	}
	b.ReportMetric(float64(first.Nanoseconds())/float64(b.N), "first-batch-ns/op")
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
