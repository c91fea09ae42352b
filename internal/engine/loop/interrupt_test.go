package loop

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
)

var stopIntr = engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "stop"}

func watchInterrupts(ctx context.Context, ch <-chan engine.Interrupt) *interruptible {
	return &interruptible{parent: ctx, ch: ch}
}

func checkInterrupted(t *testing.T, w *interruptible) {
	t.Helper()
	intr, ok := w.interrupt()
	if !ok || intr != stopIntr {
		t.Fatalf("interrupt() = %+v, %v; want %+v", intr, ok, stopIntr)
	}
	if !errors.Is(w.Err(), context.Canceled) {
		t.Fatalf("Err() = %v, want context.Canceled", w.Err())
	}
}

func TestErrTakesAnInterruptWithoutAGoroutine(t *testing.T) {
	ch := make(chan engine.Interrupt, 1)
	w := watchInterrupts(t.Context(), ch)
	defer w.stop()
	if err := w.Err(); err != nil {
		t.Fatalf("Err() = %v before any interrupt", err)
	}
	if w.made.Load() {
		t.Error("a cancel context was made although nothing needs one yet")
	}
	ch <- stopIntr
	checkInterrupted(t, w)
	if w.watched != nil {
		t.Error("a goroutine was started although nobody asked for Done")
	}
	select {
	case <-w.Done():
	default:
		t.Error("Done is not closed after the interrupt")
	}
}

func TestDoneWaitersSeeAnInterrupt(t *testing.T) {
	ch := make(chan engine.Interrupt)
	w := watchInterrupts(t.Context(), ch)
	defer w.stop()
	derived, cancel := context.WithCancel(w)
	defer cancel()
	ch <- stopIntr // unbuffered: received by the goroutine WithCancel started through Done
	<-w.Done()
	<-derived.Done()
	checkInterrupted(t, w)
}

func TestValueContextsPollToo(t *testing.T) {
	ch := make(chan engine.Interrupt, 1)
	w := watchInterrupts(t.Context(), ch)
	defer w.stop()
	ch <- stopIntr
	if err := engine.WithHost(w, engine.NoopHost{}).Err(); !errors.Is(err, context.Canceled) {
		t.Fatalf("Err() of a value context = %v, want context.Canceled", err)
	}
	checkInterrupted(t, w)
}

func TestCancelledParentTakesNoInterrupt(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	ch := make(chan engine.Interrupt, 1)
	w := watchInterrupts(ctx, ch)
	defer w.stop()
	cancel()
	ch <- stopIntr
	if _, ok := w.interrupt(); ok {
		t.Error("an interrupt after cancellation was taken")
	}
	if !errors.Is(w.Err(), context.Canceled) || len(ch) != 1 {
		t.Errorf("Err() = %v with %d interrupt(s) left; want Canceled and the interrupt untouched", w.Err(), len(ch))
	}
}

func TestNilAndClosedChannelsNeverFire(t *testing.T) {
	closed := make(chan engine.Interrupt)
	close(closed)
	for name, ch := range map[string]chan engine.Interrupt{"nil": nil, "closed": closed} {
		w := watchInterrupts(t.Context(), ch)
		done := w.Done()
		if _, ok := w.interrupt(); ok || w.Err() != nil {
			t.Errorf("%s channel: interrupt or error %v before stop", name, w.Err())
		}
		w.stop()
		<-done
		if _, ok := w.interrupt(); ok {
			t.Errorf("%s channel: stop reads as an interrupt", name)
		}
	}
}

func TestStopWaitsAndStartsNothingAfter(t *testing.T) {
	ch := make(chan engine.Interrupt)
	w := watchInterrupts(t.Context(), ch)
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			<-w.Done()
			_ = w.Err()
		})
	}
	w.stop()
	wg.Wait()
	after := watchInterrupts(t.Context(), ch)
	after.stop()
	<-after.Done()
	if after.watched != nil {
		t.Error("Done after stop started a goroutine")
	}
}

type ctxKey struct{}

func TestParentValuesAndDeadlineShowThrough(t *testing.T) {
	parent, cancel := context.WithTimeout(context.WithValue(t.Context(), ctxKey{}, "v"), time.Hour)
	defer cancel()
	w := watchInterrupts(parent, make(chan engine.Interrupt))
	defer w.stop()
	for _, when := range []string{"before Done", "after Done"} {
		if w.Value(ctxKey{}) != "v" {
			t.Errorf("%s: parent value lost", when)
		}
		if d, ok := w.Deadline(); !ok || d.IsZero() {
			t.Errorf("%s: parent deadline lost", when)
		}
		_ = w.Done()
	}
	cancel()
	<-w.Done()
	if _, ok := w.interrupt(); ok || !errors.Is(w.Err(), context.Canceled) || !errors.Is(context.Cause(w), context.Canceled) {
		t.Errorf("parent cancelled: Err() = %v, Cause = %v", w.Err(), context.Cause(w))
	}
}
