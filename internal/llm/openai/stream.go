package openai

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
)

// watchdog cancels an attempt that receives no bytes for its timeout. The
// timer's callback is its only goroutine; stop ends it.
type watchdog struct {
	timeout time.Duration
	timer   *time.Timer
	fired   atomic.Bool
}

func newWatchdog(timeout time.Duration, cancel context.CancelFunc) *watchdog {
	w := &watchdog{timeout: timeout}
	w.timer = time.AfterFunc(timeout, func() {
		w.fired.Store(true)
		cancel()
	})
	return w
}

func (w *watchdog) kick() { w.timer.Reset(w.timeout) }
func (w *watchdog) stop() { w.timer.Stop() }

func (w *watchdog) err(what, url string) error {
	return errdefs.Timeoutf("openai: %s from %s: no bytes for %s", what, url, w.timeout)
}

// idleReader kicks the watchdog whenever bytes arrive.
type idleReader struct {
	r io.Reader
	w *watchdog
}

func (r idleReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if n > 0 {
		r.w.kick()
	}
	return n, err
}

// stream is one streamed answer.
type stream struct {
	ctx       context.Context // the caller's, to tell its end from ours
	cancel    context.CancelFunc
	body      io.ReadCloser
	wd        *watchdog
	dec       *decoder
	url       string
	plain     bool // the server answered with one JSON document
	plainRead bool
	closed    bool
	err       error // sticky end of the stream
}

var _ llm.Stream = (*stream)(nil)

func newStream(ctx context.Context, cancel context.CancelFunc, resp *http.Response, wd *watchdog, url string) *stream {
	s := &stream{ctx: ctx, cancel: cancel, body: resp.Body, wd: wd, url: url}
	s.dec = newDecoder(idleReader{r: resp.Body, w: wd}, url)
	s.plain = isJSON(resp.Header.Get("Content-Type"))
	return s
}

// Next returns the next chunk; see llm.Stream.
func (s *stream) Next() (llm.Chunk, error) {
	if s.closed {
		return llm.Chunk{}, llm.ErrClosed
	}
	if s.err != nil {
		return llm.Chunk{}, s.err
	}
	c, err := s.read()
	if err != nil {
		s.err = s.explain(err)
		s.release()
		return llm.Chunk{}, s.err
	}
	return c, nil
}

func (s *stream) read() (llm.Chunk, error) {
	if !s.plain {
		return s.dec.next()
	}
	// A server that ignored stream=true sent one JSON completion.
	if s.plainRead {
		return llm.Chunk{}, io.EOF
	}
	s.plainRead = true
	body, err := io.ReadAll(io.LimitReader(idleReader{r: s.body, w: s.wd}, maxPlainBody))
	if err != nil {
		return llm.Chunk{}, err
	}
	c, err := s.dec.chunk(body)
	if err == nil && empty(c) {
		err = io.EOF
	}
	return c, err
}

const maxPlainBody = 16 << 20

// explain turns the end of a stream into the error the caller sees: the
// clean end, the caller's own context ending, the idle timeout, a server
// error already classified by the decoder, or a broken connection.
func (s *stream) explain(err error) error {
	var classified errdefs.Classifier
	switch {
	case errors.Is(err, io.EOF):
		return io.EOF
	case s.ctx.Err() != nil:
		return s.ctx.Err()
	case s.wd.fired.Load():
		return s.wd.err("stream", s.url)
	case errors.As(err, &classified):
		return err
	}
	return errdefs.NotAvailablef("openai: reading the stream from %s: %w", s.url, err)
}

// Close releases the response; it is idempotent.
func (s *stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	s.release()
	return nil
}

func (s *stream) release() {
	s.wd.stop()
	s.cancel()
	s.body.Close()
}

func isJSON(contentType string) bool {
	return strings.HasPrefix(contentType, "application/json")
}
