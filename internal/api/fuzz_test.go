package api

import (
	"bytes"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"agentd/internal/errdefs"
)

// FuzzDecodeSendBody: any request body decodes into a send, or fails with
// a client error (a 4xx class) — never a panic, never an internal error;
// a decoded body turns into a message or a client error too.
func FuzzDecodeSendBody(f *testing.F) {
	for _, s := range []string{
		`{"text":"hi"}`, `{"text":""}`, `{"message":{"role":"user","parts":[{"type":"text","text":"x"}]},"context_id":"c1"}`,
		`{"message":{"role":"user","parts":[{"type":"data","data":{"a":[1,2]}}]}}`, `{"text":"x","metadata":{"k":null}}`,
		`{"text":"\ud800"}`, `[]`, `{"message":null}`, `{"text":"a"} {}`, strings.Repeat("[", 70),
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := httptest.NewRequest(http.MethodPost, "/v1/agents/echo/messages", bytes.NewReader(b))
		r.Header.Set("Content-Type", "application/json")
		var body sendBody
		err := decodeJSON(httptest.NewRecorder(), r, 1<<16, &body)
		if err == nil {
			_, err = body.message()
		}
		if err != nil {
			if s := errdefs.HTTPStatus(err); s < 400 || s >= 500 {
				t.Fatalf("body %q: %v answers %d, want a 4xx", b, err, s)
			}
		}
	})
}

// FuzzCursorParam: the SSE resume cursor (?after= or Last-Event-ID) is a
// non-negative seq equal to its decimal text, or a 4xx.
func FuzzCursorParam(f *testing.F) {
	for _, s := range []string{"0", "17", " 3 ", "-1", "9223372036854775808", "1e3", "0x10", "", "+5"} {
		f.Add(s, true)
	}
	f.Fuzz(func(t *testing.T, v string, header bool) {
		r := httptest.NewRequest(http.MethodGet, "/v1/runs/x/events", nil)
		if header {
			r.Header["Last-Event-Id"] = []string{v}
		} else {
			r.URL.RawQuery = "after=" + strings.ReplaceAll(v, "&", "%26")
		}
		n, _, err := cursorParam(r)
		if err != nil {
			if s := errdefs.HTTPStatus(err); s != http.StatusBadRequest {
				t.Fatalf("cursor %q: %v answers %d, want 400", v, err, s)
			}
			return
		}
		if n < 0 {
			t.Fatalf("cursor %q gave %d", v, n)
		}
		if got := r.URL.Query().Get("after"); !header && got != "" {
			if want, perr := strconv.ParseInt(strings.TrimSpace(got), 10, 64); perr != nil || want != n {
				t.Fatalf("cursor %q gave %d", got, n)
			}
		}
	})
}
