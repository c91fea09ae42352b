package a2a

import (
	"bytes"
	"sync/atomic"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// batchFlush lets a stream flush once per batch of run events, as the
// REST face does, instead of once per update: the SDK's SSE writer
// flushes after every event, a write to the socket each. The handler,
// before it yields a batch of updates it holds, says how many updates the
// batch ends at (hold); the writer (deferredWriter) counts the SSE events
// it writes and flushes only once it has written that many. Every update
// or error yielded is written as exactly one SSE event by all four SDK
// transports, so the counts agree; were they ever not to, a flush would
// come early (harmless) or at the next batch's end, keep-alive or the end
// of the response — never be lost.
//
// The handler's side runs on the SDK's event goroutine, the writer's on
// the transport's: hence the atomics. Both counts only grow.
type batchFlush struct {
	yielded atomic.Int64 // updates and errors yielded so far
	through atomic.Int64 // the writer holds its flush until it wrote this many
}

// count wraps a stream's yield to count what it yields.
func (f *batchFlush) count(yield func(a2a.Event, error) bool) func(a2a.Event, error) bool {
	return func(ev a2a.Event, err error) bool {
		f.yielded.Add(1)
		return yield(ev, err)
	}
}

// hold says the next n updates yielded are in hand: the writer need not
// flush before the last of them.
func (f *batchFlush) hold(n int) {
	if n > 1 {
		f.through.Store(f.yielded.Load() + int64(n))
	}
}

// due reports whether a writer that has written written events must flush.
func (f *batchFlush) due(written int64) bool {
	return f == nil || written >= f.through.Load()
}

// sseEvent reports whether p, one write of the SDK's SSE writer, is an
// event's data (and not its id line or a keep-alive comment).
func sseEvent(p []byte) bool { return bytes.HasPrefix(p, []byte("data:")) }
