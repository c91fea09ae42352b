package a2a

import (
	"net/http"
	"strconv"
	"testing"
)

// FuzzCheckBody: the pre-decoder checks never panic, and what they let
// through nests no deeper than maxNesting.
func FuzzCheckBody(f *testing.F) {
	for _, s := range []string{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, `"\\"`, "\xff", `[[["]]]"]]]`, ``} {
		f.Add([]byte(s), "application/json")
	}
	f.Add([]byte(`{}`), "application/a2a+json; charset=UTF-16")
	f.Fuzz(func(t *testing.T, body []byte, ct string) {
		if p := checkBody(ct, body); p == nil && len(body) > 0 && nesting(body) > maxNesting {
			t.Fatalf("body nesting %d passed", nesting(body))
		}
	})
}

// FuzzResumeCursor: the subscribe cursor from the body's metadata, the
// afterSeq query or Last-Event-ID is never negative, and a header that is
// not a decimal seq is ignored rather than refused.
func FuzzResumeCursor(f *testing.F) {
	f.Add([]byte(`{"params":{"id":"t","metadata":{"afterSeq":3}}}`), "", "")
	f.Add([]byte(`{"metadata":{"afterSeq":"7"}}`), "", "")
	f.Add([]byte(`{"params":{"metadata":{"afterSeq":-1}}}`), "2", "x")
	f.Add([]byte(``), "", "12")
	f.Add([]byte(``), "1e9", "")
	f.Fuzz(func(t *testing.T, body []byte, query, lastEventID string) {
		h := http.Header{}
		if lastEventID != "" {
			h.Set(LastEventIDHeader, lastEventID)
		}
		after, ok, err := resumeCursor(body, h, query)
		switch {
		case err != nil && (ok || after != 0):
			t.Fatalf("error %v with cursor %d, %v", err, after, ok)
		case after < 0:
			t.Fatalf("negative cursor %d", after)
		case err == nil && !ok && after != 0:
			t.Fatalf("no cursor, yet %d", after)
		}
		if query == "" && ok && err == nil && len(body) == 0 {
			if n, perr := strconv.ParseInt(lastEventID, 10, 64); perr != nil || n != after {
				t.Fatalf("Last-Event-ID %q gave %d", lastEventID, after)
			}
		}
	})
}
