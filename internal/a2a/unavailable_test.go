package a2a_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"
)

// A replica that is draining (or whose store is down) refuses work with a
// retryable server error — JSON-RPC -32000, HTTP+JSON 503 UNAVAILABLE — not
// "unsupported operation", a client error saying the request itself can
// never succeed.
func TestUnavailableIsARetryableServerError(t *testing.T) {
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = e.rt.Shutdown(ctx)
	const v1Msg = `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"hi"}]}`
	const v03Msg = `{"messageId":"m2","role":"user","kind":"message","parts":[{"kind":"text","text":"hi"}]}`
	for _, tc := range []struct {
		name, path, version, body string
	}{
		{"jsonrpc-1.0 send", "/agents/echo/jsonrpc", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + v1Msg + `}}`},
		{"jsonrpc-1.0 stream", "/agents/echo/jsonrpc", "1.0", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":` + v1Msg + `}}`},
		{"jsonrpc-0.3 send", "/agents/echo/jsonrpc", "", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":` + v03Msg + `}}`},
		{"rest-1.0 send", "/agents/echo/rest/message:send", "1.0", `{"message":` + v1Msg + `}`},
		{"rest-1.0 stream", "/agents/echo/rest/message:stream", "1.0", `{"message":` + v1Msg + `}`},
		{"rest-0.3 send", "/agents/echo/rest/v1/message:send", "", `{"message":{"messageId":"m3","role":"ROLE_USER","content":[{"text":"hi"}]}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			header := map[string]string{}
			if tc.version != "" {
				header["A2A-Version"] = tc.version
			}
			status, ctype, out := e.rawCall(t, "POST", tc.path, []byte(tc.body), header)
			stream := strings.HasSuffix(tc.name, "stream") && strings.HasPrefix(tc.name, "jsonrpc")
			if !isJSON(ctype) && !(stream && ctype == "text/event-stream") {
				t.Errorf("content type %q, want JSON (an SSE event for a JSON-RPC stream)", ctype)
			}
			if tc.path == "/agents/echo/jsonrpc" {
				if code := rpcCode(out); status != http.StatusOK || code != -32000 {
					t.Errorf("draining server answered HTTP %d, code %d: %v; want 200 and -32000", status, code, out)
				}
				return
			}
			errBody, _ := out["error"].(map[string]any)
			if status != http.StatusServiceUnavailable || errBody["code"] != float64(http.StatusServiceUnavailable) || errBody["status"] != "UNAVAILABLE" {
				t.Errorf("draining server answered HTTP %d: %v; want 503 UNAVAILABLE", status, out)
			}
		})
	}
}
