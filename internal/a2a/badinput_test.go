package a2a_test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
)

// TestBadInput sends malformed and misdirected requests: each gets a
// precise error and creates nothing.
func TestBadInput(t *testing.T) {
	e := newEnv(t, func(o *agentOptions) { o.MaxBodyBytes = 4096 })
	const rpc = "/agents/conformance/jsonrpc"
	v1 := map[string]string{"A2A-Version": "1.0"}
	msg := `{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"tck-complete-task"}]}`
	cases := []struct {
		name       string
		method     string
		path       string
		body       string
		header     map[string]string
		wantStatus int
		wantCode   int    // JSON-RPC code, 0 for HTTP+JSON
		wantReason string // google.rpc.ErrorInfo reason, HTTP+JSON
	}{
		{"malformed JSON v1.0", "POST", rpc, `{"jsonrpc":"2.0",`, v1, 200, -32700, ""},
		{"malformed JSON v0.3", "POST", rpc, `{oops`, nil, 200, -32700, ""},
		{"no jsonrpc version", "POST", rpc, `{"id":1,"method":"SendMessage","params":{}}`, v1, 200, -32600, ""},
		{"id of the wrong type", "POST", rpc, `{"jsonrpc":"2.0","id":{"a":1},"method":"GetTask","params":{}}`, v1, 200, -32600, ""},
		{"GET on the JSON-RPC endpoint", "GET", rpc, ``, v1, 200, -32600, ""},
		{"unknown method v1.0", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{}}`, v1, 200, -32601, ""},
		{"unknown method v0.3", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, nil, 200, -32601, ""},
		{"v1.0 method without the version header", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"GetTask","params":{"id":"t"}}`, nil, 200, -32601, ""},
		{"message of the wrong type", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":"hi"}}`, v1, 200, -32602, ""},
		{"message missing", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`, v1, 200, -32602, ""},
		{"agent role", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"x"}]}}}`, v1, 200, -32602, ""},
		{"no parts", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[]}}}`, v1, 200, -32602, ""},
		{"no messageId", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}}`, v1, 200, -32602, ""},
		{"push config on send to loopback", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `,"configuration":{"taskPushNotificationConfig":{"url":"http://127.0.0.1/hook"}}}}`, v1, 200, -32602, ""},
		{"push config on send without url", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `,"configuration":{"taskPushNotificationConfig":{"token":"t"}}}}`, v1, 200, -32602, ""},
		{"negative historyLength", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `,"configuration":{"historyLength":-1}}}`, v1, 200, -32602, ""},
		{"unsupported version", "POST", rpc, `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":` + msg + `}}`, map[string]string{"A2A-Version": "2.0"}, 200, -32009, ""},
		{"unsupported version in the query", "POST", rpc + "?A2A-Version=0.2", `{"jsonrpc":"2.0","id":7,"method":"SendMessage","params":{"message":` + msg + `}}`, nil, 200, -32009, ""},
		{"oversized body", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + strings.Repeat("x", 5000) + `"}]}}}`, v1, 413, -32600, ""},
		{"unknown agent JSON-RPC", "POST", "/agents/nobody/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `}}`, v1, 404, -32600, ""},
		{"streaming to an unknown task", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","taskId":"nope","parts":[{"text":"x"}]}}}`, v1, 200, -32001, ""},
		{"subscribe to an unknown task", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"nope"}}`, v1, 200, -32001, ""},
		{"bad afterSeq", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"nope","metadata":{"afterSeq":"soon"}}}`, v1, 200, -32602, ""},
		{"extended card", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"GetExtendedAgentCard","params":{}}`, v1, 200, -32004, ""},
		{"push config of an unknown task v0.3", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"tasks/pushNotificationConfig/get","params":{"id":"t"}}`, nil, 200, -32001, ""},
		{"REST malformed", "POST", "/agents/conformance/rest/message:send", `{"message":`, nil, 400, 0, "PARSE_ERROR"},
		{"REST unknown task", "GET", "/agents/conformance/rest/tasks/nope", ``, nil, 404, 0, "TASK_NOT_FOUND"},
		{"REST stream to an unknown task", "POST", "/agents/conformance/rest/message:stream", `{"message":{"messageId":"m","role":"ROLE_USER","taskId":"nope","parts":[{"text":"x"}]}}`, nil, 404, 0, "TASK_NOT_FOUND"},
		{"REST wrong version", "POST", "/agents/conformance/rest/message:send", `{"message":` + msg + `}`, map[string]string{"A2A-Version": "0.3"}, 400, 0, "VERSION_NOT_SUPPORTED"},
		{"REST unknown agent", "POST", "/agents/nobody/rest/message:send", `{"message":` + msg + `}`, nil, 404, 0, ""},
		{"REST oversized body", "POST", "/agents/conformance/rest/message:send", strings.Repeat(" ", 5000), nil, 413, 0, "INVALID_REQUEST"},
		{"REST v0.3 unknown task", "GET", "/agents/conformance/rest/v1/tasks/nope", ``, nil, 404, 0, "TASK_NOT_FOUND"},
		{"text/plain body", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `}}`, map[string]string{"A2A-Version": "1.0", "Content-Type": "text/plain"}, 415, -32600, ""},
		{"latin-1 charset", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` + msg + `}}`, map[string]string{"A2A-Version": "1.0", "Content-Type": "application/json; charset=iso-8859-1"}, 415, -32600, ""},
		{"invalid UTF-8", "POST", rpc, `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + "\xff" + `"}]}}}`, v1, 200, -32700, ""},
		{"deep nesting", "POST", rpc, strings.Repeat("[", 1000) + strings.Repeat("]", 1000), v1, 200, -32700, ""},
		{"REST text/plain body", "POST", "/agents/conformance/rest/message:send", `{"message":` + msg + `}`, map[string]string{"Content-Type": "text/plain"}, 415, 0, "INVALID_REQUEST"},
		{"REST invalid UTF-8", "POST", "/agents/conformance/rest/message:send", `{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"` + "\xff" + `"}]}}`, nil, 400, 0, "INVALID_REQUEST"},
		{"REST deep nesting", "POST", "/agents/conformance/rest/message:send", strings.Repeat("[", 1000) + strings.Repeat("]", 1000), nil, 400, 0, "INVALID_REQUEST"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			status, ctype, body := e.rawCall(t, tc.method, tc.path, []byte(tc.body), tc.header)
			if status != tc.wantStatus || !isJSON(ctype) && !strings.HasPrefix(ctype, "text/event-stream") {
				t.Fatalf("status %d %q, want %d and JSON: %v", status, ctype, tc.wantStatus, body)
			}
			if tc.wantCode != 0 && rpcCode(body) != tc.wantCode {
				t.Fatalf("code %d, want %d: %v", rpcCode(body), tc.wantCode, body)
			}
			if tc.wantReason != "" && !bytes.Contains(mustJSON(body), []byte(`"reason":"`+tc.wantReason+`"`)) {
				t.Fatalf("reason: want %s in %v", tc.wantReason, body)
			}
			msg := errorMessage(body)
			if msg == "" {
				t.Fatalf("no error message in %v", body)
			}
			// Messages speak of the request, never of the server's code.
			for _, leak := range []string{"Go value", "Go struct", "jsonrpc.", "a2a.", "unmarshal"} {
				if strings.Contains(msg, leak) {
					t.Errorf("error message names an implementation detail (%q): %s", leak, msg)
				}
			}
		})
	}
	page, err := e.rt.ListTasks(ctxT(t), run.TaskQuery{})
	if err != nil || page.Total != 0 {
		t.Fatalf("bad input created %d tasks (%v)", page.Total, err)
	}
}

// TestErrorsOnStreams: an error a streaming call meets before its first
// update is an SSE event carrying the JSON-RPC error (JSON-RPC), or the
// HTTP status (HTTP+JSON) — and every official client surfaces it.
func TestErrorsOnStreams(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	done := taskOf(t, mustSend(t, c, sendReq("tck-complete-task")))
	body := `{"jsonrpc":"2.0","id":"x","method":"SendStreamingMessage","params":{"message":{"messageId":"m2","role":"ROLE_USER","taskId":"` + string(done.ID) + `","parts":[{"text":"more"}]}}}`
	status, ctype, out := e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(body), map[string]string{"A2A-Version": "1.0"})
	if status != http.StatusOK || ctype != "text/event-stream" || rpcCode(out) != -32004 || out["id"] != "x" {
		t.Fatalf("%d %s %v, want an SSE event with -32004 echoing the id", status, ctype, out)
	}
	sub := `{"jsonrpc":"2.0","id":2,"method":"tasks/resubscribe","params":{"id":"` + string(done.ID) + `"}}`
	if _, ctype, out = e.rawCall(t, "POST", "/agents/conformance/jsonrpc", []byte(sub), nil); ctype != "text/event-stream" || rpcCode(out) != -32004 {
		t.Fatalf("v0.3 resubscribe to a terminal task: %s %v", ctype, out)
	}
	for _, b := range bindings {
		c := e.client(t, "conformance", b)
		calls := map[string]func() error{
			"SubscribeToTask of an unknown task": func() error {
				return firstErr(c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: "nope"}))
			},
			"SubscribeToTask of a finished task": func() error {
				return firstErr(c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: done.ID}))
			},
			"SendStreamingMessage to an unknown task": func() error {
				m := textMessage("more")
				m.TaskID = "nope"
				return firstErr(c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: m}))
			},
		}
		for name, call := range calls {
			if err := call(); err == nil {
				t.Errorf("%s, %s: the client saw no error", b.name, name)
			}
		}
	}
}

// firstErr drains a client stream and returns its first error.
func firstErr(seq func(yield func(a2a.Event, error) bool)) error {
	for _, err := range seq {
		if err != nil {
			return err
		}
	}
	return nil
}

// isJSON reports whether ctype is one of the JSON types the bindings
// answer with.
func isJSON(ctype string) bool {
	return strings.HasPrefix(ctype, "application/json") || strings.HasPrefix(ctype, "application/a2a+json")
}

// The v1.0 HTTP+JSON binding answers application/a2a+json to clients that
// take it, and application/json to those that ask for that alone (a2a-go's
// client); JSON-RPC and the v0.3 routes answer application/json.
func TestRESTMediaType(t *testing.T) {
	e := newEnv(t)
	body := []byte(`{"message":{"messageId":"m-mt","role":"ROLE_USER","parts":[{"text":"tck-complete-task"}]}}`)
	for _, tc := range []struct {
		accept, want string
	}{
		{"", "application/a2a+json"},
		{"application/a2a+json", "application/a2a+json"},
		{"*/*", "application/a2a+json"},
		{"application/json", "application/json"},
	} {
		_, ctype, _ := e.rawCall(t, "GET", "/agents/conformance/rest/tasks/nope", nil, map[string]string{"Accept": tc.accept})
		if ctype != tc.want {
			t.Errorf("Accept %q: %q, want %q", tc.accept, ctype, tc.want)
		}
	}
	status, ctype, _ := e.rawCall(t, "POST", "/agents/conformance/rest/message:send", body, map[string]string{"Content-Type": "application/a2a+json"})
	if status != 200 || ctype != "application/a2a+json" {
		t.Errorf("send with an application/a2a+json body: %d %q, want 200 application/a2a+json", status, ctype)
	}
	if _, ctype, _ := e.rawCall(t, "GET", "/agents/conformance/rest/v1/tasks/nope", nil, nil); ctype != "application/json" {
		t.Errorf("v0.3 route: %q, want application/json", ctype)
	}
}

// A v1.0 call without the A2A-Version header is told what to send.
func TestV1MethodWithoutVersionHint(t *testing.T) {
	e := newEnv(t)
	_, _, out := e.rawCall(t, "POST", "/agents/echo/jsonrpc", []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{}}`), nil)
	if rpcCode(out) != -32601 || !strings.Contains(errorMessage(out), "A2A-Version: 1.0") {
		t.Fatalf("v1.0 method without the header: %v, want -32601 saying to send A2A-Version: 1.0", out)
	}
}
