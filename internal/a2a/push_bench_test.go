package a2a_test

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/a2a/pushtest"
	"agentd/internal/pgtest"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/pgstore"
)

// BenchmarkPushDelivery measures push delivery on one replica: tasks
// streaming answers, each with a webhook on a loopback receiver, every
// token an artifact update posted on its own. It reports webhooks/s (the
// notifications the receiver took over the iteration's wall time) and the
// delay from an event's write to its webhook's answer (p50, p99).
// "burst" streams as fast as the engine goes (delivery's capacity; the
// delay is then mostly queueing), "paced" one token per 10 ms (the delay
// a steady stream sees).
func BenchmarkPushDelivery(b *testing.B) {
	stores := []struct {
		name string
		open func(b *testing.B) store.Store
	}{
		{"memstore", func(*testing.B) store.Store { return memstore.New() }},
		{"postgres", func(b *testing.B) store.Store {
			st, err := pgstore.Open(context.Background(), pgtest.DSN(b))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { st.Close() })
			return st
		}},
	}
	for _, st := range stores {
		for _, load := range []struct {
			name          string
			tasks, tokens int
			every         time.Duration
		}{{"burst", 20, 100, 0}, {"paced", 10, 50, 10 * time.Millisecond}} {
			b.Run(st.name+"/"+load.name, func(b *testing.B) {
				benchPush(b, st.open(b), load.tasks, load.tokens, load.every)
			})
		}
	}
}

func benchPush(b *testing.B, st store.Store, tasks, tokens int, every time.Duration) {
	var mu sync.Mutex
	var delays []time.Duration
	rcv := pushtest.NewReceiver()
	b.Cleanup(rcv.Close)
	e := newEnvOn(b, st, 0, nil, func(o *agenta2a.Options) {
		o.Push = agenta2a.PushOptions{AllowPrivate: true, ClaimEvery: 20 * time.Millisecond, Observe: func(d agenta2a.Delivery) {
			mu.Lock()
			delays = append(delays, d.Sent.Sub(d.EventTime))
			mu.Unlock()
		}}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.a2a.DeliverPushes(ctx)
	}()
	b.Cleanup(func() { cancel(); <-done })
	c := e.client(b, "echo", bindings[0])
	prompt := fmt.Sprintf("stream %d every %dms", tokens, every.Milliseconds())
	b.ReportAllocs()
	b.ResetTimer()
	var wall time.Duration
	var taken int
	for i := 0; i < b.N; i++ {
		before := len(rcv.Notifications())
		start := time.Now()
		ids := make([]a2a.TaskID, tasks)
		for k := range ids {
			req := sendReq(prompt)
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: rcv.URL(fmt.Sprintf("/%d/%d", i, k))}}
			res, err := c.SendMessage(ctxT(b), req)
			if err != nil {
				b.Fatal(err)
			}
			ids[k] = res.(*a2a.Task).ID
		}
		waitAllTerminal(b, rcv, before, ids)
		wall += time.Since(start)
		taken += len(rcv.Notifications()) - before
	}
	b.StopTimer()
	b.ReportMetric(float64(taken)/wall.Seconds(), "webhooks/s")
	mu.Lock()
	slices.Sort(delays)
	if n := len(delays); n > 0 {
		b.ReportMetric(float64(delays[n/2].Microseconds())/1000, "p50-ms")
		b.ReportMetric(float64(delays[n*99/100].Microseconds())/1000, "p99-ms")
	}
	mu.Unlock()
}

// waitAllTerminal waits until the receiver, from its notification from
// on, got a terminal status of every task of ids. It looks at each
// notification once.
func waitAllTerminal(b testing.TB, rcv *pushtest.Receiver, from int, ids []a2a.TaskID) {
	pending := map[string]bool{}
	for _, id := range ids {
		pending[string(id)] = true
	}
	next := from
	err := rcv.WaitFor(ctxT(b), func(ns []pushtest.Notification) bool {
		for ; next < len(ns); next++ {
			if st, ok := ns[next].Event.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State.Terminal() {
				delete(pending, string(st.TaskID))
			}
		}
		return len(pending) == 0
	})
	if err != nil {
		b.Fatalf("%d of %d webhooks got no terminal status", len(pending), len(ids))
	}
}
