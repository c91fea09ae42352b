package remote

import (
	"context"
	"sync"

	"agentd/internal/engine"
)

// saver writes an attempt's checkpoints in order, off the stream's path:
// those the attempt waits for (the peer task named, a question asked)
// and, with hosts that cannot write a checkpoint with its event
// (engine.CheckpointedPublisher), those of every forwarded update.
// A checkpoint waits for the events before it to be durable (a commit on
// PostgreSQL); writing one per token inline would bound a relayed stream
// by commits. Instead each state is queued and the saver writes the newest
// queued one as soon as the previous write is done: at a model's pace
// every update gets its checkpoint, in a burst one write covers the
// updates of one commit round trip. Writes never go out of order, and
// wait returns once everything queued before it is written.
//
// The saver's goroutine is owned by the attempt: start it with start, and
// stop always runs before Execute returns.
type saver struct {
	host engine.Checkpointer

	mu      sync.Mutex
	pending *engine.Checkpoint
	queued  uint64 // generation of the newest queued checkpoint
	written uint64 // generation of the newest written (or failed) one
	err     error  // the first write error
	changed *sync.Cond

	kick chan struct{}
	quit chan struct{}
	done chan struct{}
}

func newSaver(host engine.Checkpointer) *saver {
	s := &saver{host: host, kick: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	s.changed = sync.NewCond(&s.mu)
	return s
}

// start runs the writer until stop.
func (s *saver) start(ctx context.Context) {
	go func() {
		defer close(s.done)
		for {
			select {
			case <-s.kick:
				s.drain(ctx)
			case <-s.quit:
				s.drain(ctx)
				return
			}
		}
	}()
}

// drain writes the newest queued checkpoint until none is queued.
func (s *saver) drain(ctx context.Context) {
	for {
		s.mu.Lock()
		cp, gen := s.pending, s.queued
		s.pending = nil
		s.mu.Unlock()
		if cp == nil {
			return
		}
		err := s.host.Checkpoint(ctx, *cp)
		s.mu.Lock()
		if err != nil && s.err == nil {
			s.err = err
		}
		s.written = gen
		s.changed.Broadcast()
		s.mu.Unlock()
	}
}

// queue replaces any checkpoint not yet written with cp and returns the
// first write error so far, so that the stream stops on a failing host.
func (s *saver) queue(cp engine.Checkpoint) (uint64, error) {
	s.mu.Lock()
	s.pending = &cp
	s.queued++
	gen, err := s.queued, s.err
	s.mu.Unlock()
	select {
	case s.kick <- struct{}{}:
	default:
	}
	return gen, err
}

// failed returns the first write error so far.
func (s *saver) failed() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// wait blocks until generation gen is written and returns the first
// write error.
func (s *saver) wait(gen uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.written < gen {
		s.changed.Wait()
	}
	return s.err
}

// stop writes what is queued, ends the goroutine and waits for it.
func (s *saver) stop() error {
	close(s.quit)
	<-s.done
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}
