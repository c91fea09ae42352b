package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// FuzzJSONRPCWire posts arbitrary bodies to a served agent's JSON-RPC
// endpoint, as v1.0 and as v0.3: whatever arrives, the server answers in
// time, never with a 5xx, and never with an internal error (-32603) —
// a malformed envelope or body is the client's error, and says so.
func FuzzJSONRPCWire(f *testing.F) {
	for _, s := range []string{
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","messageId":"m1","parts":[{"text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":"x","method":"message/send","params":{"message":{"kind":"message","role":"user","messageId":"m2","parts":[{"kind":"text","text":"hi"}]}}}`,
		`{"jsonrpc":"2.0","id":2,"method":"GetTask","params":{"id":"nope","historyLength":-1}}`,
		`{"jsonrpc":"2.0","id":3,"method":"tasks/get","params":{"id":""}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ListTasks","params":{"pageSize":1000000}}`,
		`{"jsonrpc":"2.0","id":5,"method":"SubscribeToTask","params":{"id":"x","metadata":{"afterSeq":"-3"}}}`,
		`{"jsonrpc":"2.0","id":6,"method":"CancelTask","params":{}}`,
		`{"jsonrpc":"1.0","method":"SendMessage"}`, `[]`, `{"id":{}}`, `null`, ``,
	} {
		f.Add([]byte(s), true)
		f.Add([]byte(s), false)
	}
	e := newEnv(f)
	client := &http.Client{Timeout: 20 * time.Second}
	f.Fuzz(func(t *testing.T, body []byte, v1 bool) {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.base+"/agents/echo/jsonrpc", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if v1 {
			req.Header.Set("A2A-Version", "1.0")
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("body %q: %v", body, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode >= 500 {
			t.Fatalf("body %q: status %d: %s", body, resp.StatusCode, b)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
			b = firstSSEData(b)
		}
		var out struct {
			Error *struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(b, &out) == nil && out.Error != nil && out.Error.Code == -32603 {
			t.Fatalf("body %q: internal error: %s", body, out.Error.Message)
		}
	})
}
