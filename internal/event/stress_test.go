package event_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"agentd/internal/event"
)

// TestConcurrentSubscribePublishClose churns subscriptions under every
// policy and every way of ending while publishers run: first to check that
// the index accounts for every subscription, then again while the bus
// closes underneath. Under -race it checks the locking; throughout it checks
// that every subscription's channel gets closed.
func TestConcurrentSubscribePublishClose(t *testing.T) {
	bus := event.NewInProc()
	ctx, stopPublishers := context.WithCancel(context.Background())
	var publishers sync.WaitGroup
	for g := range 2 {
		publishers.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 10))
			for ctx.Err() == nil {
				pctx, cancel := context.WithTimeout(ctx, time.Millisecond)
				_ = bus.Publish(pctx, event.Envelope{Subject: randomSubject(r)}) // ErrBusClosed at the end
				cancel()
			}
		})
	}
	r := rand.New(rand.NewPCG(5, 6))
	var survivors []event.Subscription // only the bus Close ends these
	for range 50 {
		survivors = append(survivors, subscribe(t, bus, randomPattern(r), event.WithBufferSize(2)))
	}

	var rounds atomic.Int64
	churn(t, bus, 150, &rounds, 0)
	if n := bus.Len(); n != len(survivors) {
		t.Errorf("Len() = %d after churn, want the %d survivors", n, len(survivors))
	}
	// Again, until Subscribe reports the bus that one churner closes
	// after another 100 rounds.
	churn(t, bus, 1<<30, &rounds, rounds.Load()+100)
	stopPublishers()
	publishers.Wait()
	for _, sub := range survivors {
		drain(t, sub)
	}
	if n := bus.Len(); n != 0 {
		t.Errorf("Len() = %d after Close, want 0", n)
	}
}

// churn runs four goroutines that each subscribe, read a little and end the
// subscription (by cancel or Close) rounds times or until the bus closes.
// The round that brings done to closeAt closes the bus.
func churn(t *testing.T, bus *event.InProc, rounds int, done *atomic.Int64, closeAt int64) {
	policies := []event.Overflow{event.OverflowDropOldest, event.OverflowDropNewest, event.OverflowBlock, event.OverflowDetach}
	var churners sync.WaitGroup
	for g := range 4 {
		churners.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), uint64(rounds)))
			for range rounds {
				ctx, cancel := context.WithCancel(context.Background())
				sub, err := bus.Subscribe(ctx, randomPattern(r),
					event.WithBufferSize(1+r.IntN(4)),
					event.WithOverflow(policies[r.IntN(len(policies))], time.Millisecond))
				if err != nil { // the bus closed
					cancel()
					return
				}
				for range r.IntN(3) {
					select {
					case <-sub.C():
					default:
					}
				}
				if r.IntN(2) == 0 {
					cancel()
				} else {
					sub.Close()
				}
				if _, ok := drainWithin(sub, waitLimit); !ok {
					t.Errorf("subscription %d not closed after %v", done.Load(), waitLimit)
				}
				cancel()
				if done.Add(1) == closeAt {
					bus.Close()
				}
			}
		})
	}
	churners.Wait()
}
