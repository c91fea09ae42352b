package event_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

func TestPatternMatch(t *testing.T) {
	cases := []struct {
		pattern event.Pattern
		subject event.Subject
		want    bool
	}{
		{"a.b.c", "a.b.c", true},
		{"a.b.c", "a.b", false},
		{"a.b", "a.b.c", false},
		{"a.b.c", "a.b.d", false},
		{"a.b.c", "a.bb.c", false},
		{"a.bb.c", "a.b.c", false},
		{"a", "a", true},
		{"a", "ab", false},
		{"*", "a", true},
		{"*", "a.b", false},
		{"a.*", "a.b", true},
		{"a.*", "a", false},
		{"a.*", "a.b.c", false},
		{"*.b.*", "a.b.c", true},
		{"*.b.*", "a.x.c", false},
		{"a.*.c", "a.bcd.c", true},
		{">", "a", true},
		{">", "a.b.c", true},
		{"a.>", "a", false},
		{"a.>", "a.b", true},
		{"a.>", "a.b.c.d", true},
		{"a.>", "b.c", false},
		{"a.*.>", "a.b", false},
		{"a.*.>", "a.b.c", true},
		{"engine.run.r1.>", "engine.run.r1.stream.echo.delta", true},
		{"engine.run.r1.>", "engine.run.r10.end", false},
		{"engine.run.*.end", "engine.run.r1.end", true},
		{"engine.run.*.end", "engine.run.r1.start", false},
		{"", "a", false},
		{"a", "", false},
		{"", "", false},
	}
	for _, c := range cases {
		if got := c.pattern.Match(c.subject); got != c.want {
			t.Errorf("Pattern(%q).Match(%q) = %v, want %v", c.pattern, c.subject, got, c.want)
		}
	}
}

// TestPatternMatchAgreesWithTokens cross-checks Match against the obvious
// token-slice definition on random valid inputs over a small alphabet, so
// that near-misses (shared prefixes, differing lengths) come up often.
func TestPatternMatchAgreesWithTokens(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		p, s := randomPattern(r), randomSubject(r)
		if got, want := p.Match(s), matchTokens(p, s); got != want {
			t.Fatalf("Pattern(%q).Match(%q) = %v, want %v", p, s, got, want)
		}
	}
}

func matchTokens(p event.Pattern, s event.Subject) bool {
	pt, st := strings.Split(string(p), "."), strings.Split(string(s), ".")
	for i, tok := range pt {
		switch {
		case tok == ">":
			return len(st) > i
		case i >= len(st):
			return false
		case tok != "*" && tok != st[i]:
			return false
		}
	}
	return len(pt) == len(st)
}

var tokenAlphabet = []string{"a", "b", "ab", "ba"}

func randomSubject(r *rand.Rand) event.Subject {
	toks := make([]string, 1+r.IntN(4))
	for i := range toks {
		toks[i] = tokenAlphabet[r.IntN(len(tokenAlphabet))]
	}
	return event.Subject(strings.Join(toks, "."))
}

func randomPattern(r *rand.Rand) event.Pattern {
	toks := make([]string, 1+r.IntN(4))
	for i := range toks {
		switch n := r.IntN(len(tokenAlphabet) + 2); {
		case n < len(tokenAlphabet):
			toks[i] = tokenAlphabet[n]
		case n == len(tokenAlphabet):
			toks[i] = "*"
		case i == len(toks)-1:
			toks[i] = ">"
		default:
			toks[i] = "*"
		}
	}
	return event.Pattern(strings.Join(toks, "."))
}

func TestPatternMatchDoesNotAllocate(t *testing.T) {
	p, s := event.Pattern("engine.run.*.stream.>"), event.Subject("engine.run.r1.stream.echo.delta")
	matched := false
	if n := testing.AllocsPerRun(100, func() { matched = p.Match(s) }); n != 0 || !matched {
		t.Fatalf("Match = %v, allocating %v times per call; want true without allocating", matched, n)
	}
}

func TestPatternValid(t *testing.T) {
	cases := []struct {
		pattern event.Pattern
		wantErr string // substring; "" means valid
	}{
		{"a", ""},
		{"a.b.c", ""},
		{"*", ""},
		{">", ""},
		{"a.*.c", ""},
		{"a.*.>", ""},
		{"engine.run.r1.>", ""},
		{"", "empty"},
		{"a..b", "token 2 is empty"},
		{".a", "token 1 is empty"},
		{"a.", "token 2 is empty"},
		{"a.>.b", "'>' must be the last token"},
		{">.a", "'>' must be the last token"},
		{"a.b*", "mixes a wildcard"},
		{"a.*b.c", "mixes a wildcard"},
		{"a.b>", "mixes a wildcard"},
		{"a.**", "mixes a wildcard"},
		{"a.>>", "mixes a wildcard"},
	}
	for _, c := range cases {
		err := c.pattern.Valid()
		checkValidity(t, "Pattern("+string(c.pattern)+")", err, c.wantErr)
	}
}

func TestSubjectValid(t *testing.T) {
	cases := []struct {
		subject event.Subject
		wantErr string
	}{
		{"a", ""},
		{"engine.run.r1.stream.echo.delta", ""},
		{"", "empty"},
		{"a..b", "token 2 is empty"},
		{".a", "token 1 is empty"},
		{"a.", "token 2 is empty"},
		{"a.*", "contains a wildcard"},
		{"a.>", "contains a wildcard"},
		{"a.b*c", "contains a wildcard"},
	}
	for _, c := range cases {
		checkValidity(t, "Subject("+string(c.subject)+")", c.subject.Valid(), c.wantErr)
	}
}

func checkValidity(t *testing.T, what string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s.Valid() = %v, want nil", what, err)
	case wantErr != "" && err == nil:
		t.Errorf("%s.Valid() = nil, want an error containing %q", what, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s.Valid() = %v, want it to contain %q", what, err, wantErr)
	case wantErr != "" && !errdefs.IsValidation(err):
		t.Errorf("%s.Valid() = %v, class %q, want validation", what, err, errdefs.ClassOf(err))
	}
}

// FuzzPatternMatch checks that Match never panics, whatever it is given,
// and agrees with the token definition on valid input.
func FuzzPatternMatch(f *testing.F) {
	for _, seed := range [][2]string{{"a.*.>", "a.b.c"}, {"a..b", "a..b"}, {"a.", "a."}, {">", ""}, {"*.", "a.b"}} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, p, s string) {
		got := event.Pattern(p).Match(event.Subject(s))
		if event.Pattern(p).Valid() != nil || event.Subject(s).Valid() != nil {
			return
		}
		if want := matchTokens(event.Pattern(p), event.Subject(s)); got != want {
			t.Fatalf("Pattern(%q).Match(%q) = %v, want %v", p, s, got, want)
		}
	})
}
