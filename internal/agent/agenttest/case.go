package agenttest

import (
	"fmt"
	"testing"
)

// Reporter is the part of testing.TB the checks use; *testing.T and
// *testing.B satisfy it. A check reports every violation with Errorf and
// returns; it never stops the goroutine, so fakes need no Goexit.
type Reporter interface {
	Helper()
	Errorf(format string, args ...any)
}

// Case is one named contract check.
type Case struct {
	Name  string
	Check func(r Reporter)
}

// run runs cases as subtests of t.
func run(t *testing.T, cases []Case) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.Name, func(t *testing.T) { c.Check(t) })
	}
}

// guard calls fn and reports a panic as a failure naming what was called,
// so one bad call fails the check instead of crashing the test binary.
func guard(r Reporter, what string, fn func()) {
	r.Helper()
	defer func() {
		if v := recover(); v != nil {
			r.Errorf("%s panicked: %v", what, v)
		}
	}()
	fn()
}

// describe names a fixture in failure messages.
func describe(kind, name string) string { return fmt.Sprintf("%s(%s)", kind, name) }
