package enginetest

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
)

// captureT runs the suite under a harness that records failures instead
// of failing the real test: Fatal and Skip end the sub-test's goroutine
// the way testing does, and cleanups run when the sub-test ends.
type captureT struct {
	testing.TB // the real test, for Logf, Context, TempDir …
	name       string
	log        *failureLog

	mu       sync.Mutex
	failed   bool
	skipped  bool
	cleanups []func()
}

// failureLog collects failure messages by sub-test name.
type failureLog struct {
	mu      sync.Mutex
	byTest  map[string][]string
	skipped []string
}

func newCaptureT(real testing.TB) *captureT {
	return &captureT{TB: real, name: "suite", log: &failureLog{byTest: map[string][]string{}}}
}

func (c *captureT) Helper() {}

func (c *captureT) Name() string { return c.name }

func (c *captureT) Errorf(format string, args ...any) { c.record(fmt.Sprintf(format, args...)) }
func (c *captureT) Error(args ...any)                 { c.record(fmt.Sprint(args...)) }
func (c *captureT) Fatalf(format string, args ...any) { c.Errorf(format, args...); runtime.Goexit() }
func (c *captureT) Fatal(args ...any)                 { c.Error(args...); runtime.Goexit() }
func (c *captureT) Fail()                             { c.record("Fail called") }
func (c *captureT) FailNow()                          { c.markFailed(); runtime.Goexit() }
func (c *captureT) Skip(args ...any)                  { c.SkipNow() }
func (c *captureT) Skipf(string, ...any)              { c.SkipNow() }

func (c *captureT) SkipNow() {
	c.mu.Lock()
	c.skipped = true
	c.mu.Unlock()
	c.log.mu.Lock()
	c.log.skipped = append(c.log.skipped, c.name)
	c.log.mu.Unlock()
	runtime.Goexit()
}

func (c *captureT) Failed() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.failed
}

func (c *captureT) Skipped() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.skipped
}

func (c *captureT) Cleanup(f func()) {
	c.mu.Lock()
	c.cleanups = append(c.cleanups, f)
	c.mu.Unlock()
}

func (c *captureT) markFailed() {
	c.mu.Lock()
	c.failed = true
	c.mu.Unlock()
}

func (c *captureT) record(msg string) {
	c.markFailed()
	c.log.mu.Lock()
	c.log.byTest[c.name] = append(c.log.byTest[c.name], msg)
	c.log.mu.Unlock()
}

// Run runs f as a sub-test in its own goroutine, so Goexit ends only it.
func (c *captureT) Run(name string, f func(suiteT)) bool {
	child := &captureT{TB: c.TB, name: c.name + "/" + name, log: c.log}
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer child.runCleanups()
		f(child)
	}()
	<-done
	if child.Failed() {
		c.mu.Lock()
		c.failed = true
		c.mu.Unlock()
	}
	return !child.Failed()
}

func (c *captureT) runCleanups() {
	c.mu.Lock()
	fs := slices.Clone(c.cleanups)
	c.mu.Unlock()
	for _, f := range slices.Backward(fs) {
		f()
	}
}

// failures returns the messages recorded for the named sub-test of the
// suite ("Success", "Interrupt", …).
func (l *failureLog) failures(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.byTest["suite/"+sub])
}

func (l *failureLog) all() map[string][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make(map[string][]string, len(l.byTest))
	for k, v := range l.byTest {
		out[k] = slices.Clone(v)
	}
	return out
}
