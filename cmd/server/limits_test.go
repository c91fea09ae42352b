package main

import (
	"strings"
	"testing"
)

// TestLimitsReadBodiesAsTheFacesDo: spellings the faces' decoders accept
// — a JSON-RPC method key in another case, escapes in the method name, a
// "Parts" key, ?stream=1 — are held to the limits like the usual ones.
// globex, under its limits, is served the same bodies: the server does
// take them as sends.
func TestLimitsReadBodiesAsTheFacesDo(t *testing.T) {
	s := startWithAuth(t, "", authYAML+"limits: {concurrent_runs: 1, max_parts: 2}\n")
	r := s.call(t, acmeKey, "POST", "/v1/agents/echo/messages?wait=false", `{"text":"stream 50 every 200ms"}`)
	if r.status != 202 {
		t.Fatalf("acme's long run: %d %s", r.status, r.body)
	}
	var long runJSON
	r.json(t, &long)
	defer s.call(t, acmeKey, "POST", "/v1/runs/"+long.ID+"/cancel", "")
	msg := `{"message":{"messageId":"m-%s","role":"ROLE_USER","parts":[{"text":"hi"}]}}`
	for _, c := range []struct{ name, path, body string }{
		{"Method", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"Method":"SendMessage","params":` + strings.Replace(msg, "%s", "1", 1) + `}`},
		{"escaped", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"m\u0065thod":"Send\u004dessage","params":` + strings.Replace(msg, "%s", "2", 1) + `}`},
		{"stream=1", "/v1/agents/echo/messages?stream=1", `{"text":"hi"}`},
	} {
		r := s.call(t, acmeKey, "POST", c.path, c.body, "A2A-Version", "1.0")
		if r.status != 429 || !strings.Contains(r.body, "tenant acme has 1 active runs") {
			t.Errorf("acme %s at its run limit: %d %s, want 429", c.name, r.status, r.body)
		}
		r = s.call(t, globexKey, "POST", c.path, c.body, "A2A-Version", "1.0")
		if r.status != 200 || strings.Contains(r.body, `"error"`) {
			t.Errorf("globex %s under its limit: %d %s, want a served send", c.name, r.status, r.body)
		}
	}
	three := `[{"text":"a"},{"text":"b"},{"text":"c"}]`
	for _, c := range []struct{ path, body string }{
		{"/v1/agents/echo/messages", `{"message":{"role":"user","Parts":` + three + `}}`},
		{"/agents/echo/rest/message:send", `{"message":{"messageId":"m-3","role":"ROLE_USER","p\u0061rts":` + three + `}}`},
	} {
		if r := s.call(t, globexKey, "POST", c.path, c.body, "A2A-Version", "1.0"); r.status != 400 || !strings.Contains(r.body, "3 parts; at most 2") {
			t.Errorf("globex POST %s with three parts: %d %s, want 400", c.path, r.status, r.body)
		}
	}
}
