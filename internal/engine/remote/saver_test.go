package remote

import (
	"context"
	"sync"
	"testing"

	"agentd/internal/engine"
)

// gatedHost blocks each Checkpoint until released and records the steps
// written.
type gatedHost struct {
	entered chan string
	release chan struct{}
	mu      sync.Mutex
	written []string
}

func (h *gatedHost) Checkpoint(_ context.Context, cp engine.Checkpoint) error {
	h.entered <- cp.Step
	<-h.release
	h.mu.Lock()
	h.written = append(h.written, cp.Step)
	h.mu.Unlock()
	return nil
}

// TestSaverCoalescesInOrder: while a write is in flight, later states
// replace each other; the newest is written next, and wait returns once
// its generation is written.
func TestSaverCoalescesInOrder(t *testing.T) {
	h := &gatedHost{entered: make(chan string), release: make(chan struct{})}
	s := newSaver(h)
	s.start(context.Background())
	if _, err := s.queue(engine.Checkpoint{Step: "1"}); err != nil {
		t.Fatal(err)
	}
	if got := <-h.entered; got != "1" {
		t.Fatalf("first write %q", got)
	}
	var last uint64
	for _, step := range []string{"2", "3", "4"} {
		gen, err := s.queue(engine.Checkpoint{Step: step})
		if err != nil {
			t.Fatal(err)
		}
		last = gen
	}
	waited := make(chan error, 1)
	go func() { waited <- s.wait(last) }()
	h.release <- struct{}{}
	if got := <-h.entered; got != "4" {
		t.Fatalf("second write %q, want the newest (4)", got)
	}
	h.release <- struct{}{}
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := s.stop(); err != nil {
		t.Fatal(err)
	}
	if h.written[0] != "1" || h.written[1] != "4" || len(h.written) != 2 {
		t.Fatalf("written %v, want [1 4]", h.written)
	}
}
