package api_test

import (
	"bufio"
	"net"
	"net/http"
	"testing"
	"time"

	"agentd/internal/api"
)

// TestMethodNotAllowedListsAllowedMethods sends methods a path does not
// serve: 405 with its own problem type and the Allow header RFC 9110
// requires.
func TestMethodNotAllowedListsAllowedMethods(t *testing.T) {
	e := newEnv(t, api.Options{})
	for _, c := range []struct{ method, path, allow string }{
		{"DELETE", "/v1/runs/x", "GET, HEAD"},
		{"GET", "/v1/agents/echo/messages", "POST"},
		{"PUT", "/v1/agents", "GET, HEAD"},
		{"POST", "/v1/runs/x/events", "GET, HEAD"},
		{"GET", "/v1/runs/x/cancel", "POST"},
		{"QUERY", "/v1/runs", "GET, HEAD"},
	} {
		t.Run(c.method+" "+c.path, func(t *testing.T) {
			r := e.do(c.method, c.path, nil)
			p := problem(t, r, http.StatusMethodNotAllowed, "", c.method, c.path)
			if p.Type != "urn:agentd:problem:method_not_allowed" {
				t.Errorf("type %q, want urn:agentd:problem:method_not_allowed", p.Type)
			}
			if got := r.header.Values("Allow"); len(got) != 1 || got[0] != c.allow {
				t.Errorf("Allow %q, want %q", got, c.allow)
			}
		})
	}
	// A method chi does not know, on a path nothing serves: not a 405.
	problem(t, e.do("BREW", "/v1/coffee", nil), http.StatusNotFound, "", "/v1/coffee")
}

// TestHeadAnswersLikeGet sends HEAD to every GET route: the GET's status
// and headers, no body.
func TestHeadAnswersLikeGet(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("echo", "", text("hi"))
	for _, path := range []string{
		"/healthz", "/readyz", "/openapi.yaml", "/v1/agents", "/v1/agents/echo", "/v1/runs",
		"/v1/runs/" + v.ID, "/v1/runs/" + v.ID + "/events", "/v1/contexts/" + v.ContextID + "/messages",
		"/v1/runs/nope", "/v1/runs?limit=0",
	} {
		get, head := e.do(http.MethodGet, path, nil), e.do(http.MethodHead, path, nil)
		if head.status != get.status || head.header.Get("Content-Type") != get.header.Get("Content-Type") {
			t.Errorf("HEAD %s: %d %q, GET: %d %q", path, head.status, head.header.Get("Content-Type"), get.status, get.header.Get("Content-Type"))
		}
		if len(head.body) != 0 {
			t.Errorf("HEAD %s has a body: %q", path, head.body)
		}
	}
}

// TestHeadOnEventsOfALiveRun asks HEAD of a working run's stream: the
// answer ends, so the connection serves the next request.
func TestHeadOnEventsOfALiveRun(t *testing.T) {
	e := newEnv(t, api.Options{Heartbeat: time.Hour})
	v := e.send("conformance", "?wait=false", text("tck-cancel"))
	e.waitStatus(v.ID, "working")
	defer e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil)

	conn, err := net.Dial("tcp", e.srv.Listener.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	// Bounds the wait for an answer that a stream left open would hold.
	if err := conn.SetDeadline(time.Now().Add(5 * time.Second)); err != nil {
		t.Fatal(err)
	}
	br := bufio.NewReader(conn)
	for _, req := range []*http.Request{
		mustRequest(t, http.MethodHead, "/v1/runs/"+v.ID+"/events"),
		mustRequest(t, http.MethodGet, "/healthz"),
	} {
		if err := req.Write(conn); err != nil {
			t.Fatal(err)
		}
		res, err := http.ReadResponse(br, req)
		if err != nil {
			t.Fatalf("%s %s: %v (the HEAD answer did not end)", req.Method, req.URL.Path, err)
		}
		if err := res.Body.Close(); err != nil {
			t.Fatal(err)
		}
		if res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: status %d", req.Method, req.URL.Path, res.StatusCode)
		}
		if req.Method == http.MethodHead && res.Header.Get("Content-Type") != "text/event-stream" {
			t.Errorf("HEAD events: Content-Type %q", res.Header.Get("Content-Type"))
		}
	}
}

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	req, err := http.NewRequest(method, "http://agentd"+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	return req
}

// TestUnsupportedMediaType refuses bodies that are not UTF-8 JSON with a
// 415 of its own problem type.
func TestUnsupportedMediaType(t *testing.T) {
	e := newEnv(t, api.Options{})
	for ct, mentions := range map[string]string{
		"text/plain":                       "text/plain",
		"application/json; charset=latin1": `charset "latin1"`,
	} {
		p := problem(t, e.do(http.MethodPost, "/v1/agents/echo/messages", `{"text":"hi"}`, "Content-Type", ct),
			http.StatusUnsupportedMediaType, "", mentions)
		if p.Type != "urn:agentd:problem:unsupported_media_type" {
			t.Errorf("%s: type %q, want urn:agentd:problem:unsupported_media_type", ct, p.Type)
		}
	}
	if r := e.do(http.MethodPost, "/v1/agents/echo/messages", `{"text":"hi"}`, "Content-Type", "application/json; charset=UTF-8"); r.status != http.StatusOK {
		t.Errorf("charset=UTF-8: %s", r)
	}
	if n := e.total(); n != 1 {
		t.Errorf("%d runs, want 1 (only the UTF-8 send)", n)
	}
}
