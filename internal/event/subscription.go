package event

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// subscription is InProc's Subscription. Its life has three steps, each
// safe to race with publishers and with the other ways of ending it:
//
//  1. open: publishers send under mu.RLock (sends never wait except under
//     OverflowBlock, and that wait also watches done).
//  2. ending (begin): the first caller to set end wins and records why;
//     closing done releases any publisher waiting for room. From here on,
//     publishers skip the subscription.
//  3. ended (finish): the subscription leaves the bus index, its context
//     callback is released, and mu.Lock (which waits for in-flight sends,
//     all short now) guards closing the channel.
//
// Err reads end, which is set before the channel closes, so a consumer that
// saw the channel close always sees why.
type subscription struct {
	bus     *InProc
	pattern Pattern
	cfg     SubConfig
	ch      chan Envelope
	done    chan struct{}
	end     atomic.Pointer[endState]

	mu     sync.RWMutex
	closed bool        // ch is closed; guarded by mu
	stop   func() bool // releases the context.AfterFunc; guarded by mu

	slot int // position in its index list; guarded by bus.mu
}

type endState struct{ err error }

func newSubscription(b *InProc, p Pattern, cfg SubConfig) *subscription {
	return &subscription{
		bus:     b,
		pattern: p,
		cfg:     cfg,
		ch:      make(chan Envelope, cfg.BufferSize),
		done:    make(chan struct{}),
	}
}

// C implements Subscription.
func (s *subscription) C() <-chan Envelope { return s.ch }

// Err implements Subscription.
func (s *subscription) Err() error {
	if e := s.end.Load(); e != nil {
		return e.err
	}
	return nil
}

// Close implements Subscription.
func (s *subscription) Close() error {
	s.terminate(nil)
	return nil
}

// watch ends s when ctx is done. context.AfterFunc registers a callback
// instead of parking a goroutine per subscription, which matters at 10k
// open streams.
func (s *subscription) watch(ctx context.Context) {
	stop := context.AfterFunc(ctx, func() { s.terminate(ctx.Err()) })
	s.mu.Lock()
	ended := s.closed
	if !ended {
		s.stop = stop
	}
	s.mu.Unlock()
	if ended {
		stop()
	}
}

// terminate ends s with err unless it has ended already.
func (s *subscription) terminate(err error) {
	if s.begin(err) {
		s.finish()
	}
}

// begin is step 2 of the life above; it reports whether the caller won and
// must call finish. It takes no lock, so a publisher may call it while it
// holds mu.RLock.
func (s *subscription) begin(err error) bool {
	if !s.end.CompareAndSwap(nil, &endState{err: err}) {
		return false
	}
	close(s.done)
	return true
}

// finish is step 3. The caller must hold no lock.
func (s *subscription) finish() {
	s.bus.remove(s)
	s.mu.Lock()
	s.closed = true
	close(s.ch)
	stop := s.stop
	s.stop = nil
	s.mu.Unlock()
	if stop != nil {
		stop()
	}
}

// deliver offers env to s under its overflow policy. It returns an error
// only when ctx ended while an OverflowBlock subscriber had no room.
func (s *subscription) deliver(ctx context.Context, env Envelope) error {
	if s.cfg.Filter != nil && !s.cfg.Filter(env) {
		return nil
	}
	var err error
	detached := false
	s.mu.RLock()
	if s.end.Load() == nil {
		switch s.cfg.Overflow {
		case OverflowDropNewest:
			s.trySend(env)
		case OverflowBlock:
			err = s.sendBlocking(ctx, env)
		case OverflowDetach:
			if !s.trySend(env) {
				detached = s.begin(fmt.Errorf("%w: %d envelopes buffered when %q arrived for pattern %q",
					ErrDetached, s.cfg.BufferSize, env.Subject, s.pattern))
			}
		default:
			s.sendDroppingOldest(env)
		}
	}
	s.mu.RUnlock()
	if detached {
		s.finish()
	}
	return err
}

func (s *subscription) trySend(env Envelope) bool {
	select {
	case s.ch <- env:
		return true
	default:
		return false
	}
}

// sendDroppingOldest makes room by discarding from the head of the buffer.
// Concurrent publishers may each discard one; every round either sends or
// frees a slot, so the loop ends.
func (s *subscription) sendDroppingOldest(env Envelope) {
	for !s.trySend(env) {
		select {
		case <-s.ch:
		default:
		}
	}
}

// sendBlocking waits for room at most BlockTimeout, then drops env for this
// subscriber. It gives up early when the subscription ends or ctx is done.
func (s *subscription) sendBlocking(ctx context.Context, env Envelope) error {
	if s.trySend(env) {
		return nil
	}
	t := time.NewTimer(s.cfg.BlockTimeout)
	defer t.Stop()
	select {
	case s.ch <- env:
		return nil
	case <-t.C:
		return nil
	case <-s.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
