package event

import (
	"strings"

	"agentd/internal/errdefs"
)

// Subject names what an event is about: dot-separated tokens, e.g.
// "engine.run.r1.stream.echo.delta". Tokens never contain '.', '*' or '>'.
type Subject string

// Pattern selects subjects, NATS style: tokens separated by '.', '*' matches
// exactly one token, '>' (only as the last token) matches one or more.
type Pattern string

// Valid reports whether s is a publishable subject: non-empty, no empty
// token, and no wildcard character anywhere (a subject that contained one
// would match patterns it was never meant to). Publish calls it on every
// envelope, so the common case is a few vectorised scans and no allocation.
func (s Subject) Valid() error {
	if wellFormedSubject(string(s)) {
		return nil
	}
	if s == "" {
		return errdefs.Validationf("event: subject is empty")
	}
	rest, i := string(s), 1
	for {
		tok, after, more := strings.Cut(rest, ".")
		switch {
		case tok == "":
			return errdefs.Validationf("event: subject %q: token %d is empty", s, i)
		case strings.ContainsAny(tok, "*>"):
			return errdefs.Validationf("event: subject %q: token %d (%q) contains a wildcard", s, i, tok)
		case !more:
			return errdefs.Validationf("event: subject %q is malformed", s)
		}
		rest, i = after, i+1
	}
}

// wellFormedSubject is the fast path of Subject.Valid: three vectorised
// scans instead of a byte loop, because it runs on every publish.
func wellFormedSubject(s string) bool {
	return s != "" && s[0] != '.' && s[len(s)-1] != '.' &&
		!strings.Contains(s, "..") &&
		strings.IndexByte(s, '*') < 0 && strings.IndexByte(s, '>') < 0
}

// Valid reports whether p is a well-formed pattern: non-empty, no empty
// token, '*' and '>' only as whole tokens, and '>' only as the last token.
func (p Pattern) Valid() error {
	if p == "" {
		return errdefs.Validationf("event: pattern is empty")
	}
	rest, i := string(p), 1
	for {
		tok, after, more := strings.Cut(rest, ".")
		switch {
		case tok == "":
			return errdefs.Validationf("event: pattern %q: token %d is empty", p, i)
		case tok == ">" && more:
			return errdefs.Validationf("event: pattern %q: '>' must be the last token, found at token %d", p, i)
		case tok != "*" && tok != ">" && strings.ContainsAny(tok, "*>"):
			return errdefs.Validationf("event: pattern %q: token %d (%q) mixes a wildcard with other characters", p, i, tok)
		}
		if !more {
			return nil
		}
		rest, i = after, i+1
	}
}

// Match reports whether subject s is selected by p. It walks both strings
// byte by byte and never allocates, so it is cheap enough for per-envelope
// checks. An empty pattern or subject matches nothing; other malformed input
// gets no guarantee beyond "does not panic" (check Valid first).
func (p Pattern) Match(s Subject) bool {
	ps, ss := string(p), string(s)
	if ps == "" || ss == "" {
		return false
	}
	i, j := 0, 0 // both at the start of a token
	for {
		switch {
		case ps[i] == '>' && i+1 == len(ps):
			return true // a subject token starts at j
		case ps[i] == '*' && (i+1 == len(ps) || ps[i+1] == '.'):
			i++
			for j < len(ss) && ss[j] != '.' {
				j++
			}
		default:
			for ; i < len(ps) && ps[i] != '.'; i, j = i+1, j+1 {
				if j == len(ss) || ss[j] != ps[i] {
					return false
				}
			}
			if j < len(ss) && ss[j] != '.' {
				return false
			}
		}
		// Both tokens ended: at the end of their string or at a '.'.
		if i == len(ps) || j == len(ss) {
			return i == len(ps) && j == len(ss)
		}
		i, j = i+1, j+1
		if i == len(ps) || j == len(ss) {
			return false // a trailing '.'
		}
	}
}
