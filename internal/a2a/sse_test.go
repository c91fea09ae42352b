package a2a_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	agenta2a "agentd/internal/a2a"
)

// sseStream is a raw SSE response being read line by line.
type sseStream struct {
	resp *http.Response
	sc   *bufio.Scanner
}

func openSSE(t *testing.T, e *env, method, path, body string, header map[string]string) *sseStream {
	t.Helper()
	req, _ := http.NewRequestWithContext(ctxT(t), method, e.base+path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		var b bytes.Buffer
		_, _ = b.ReadFrom(resp.Body)
		t.Fatalf("content type %q, want an SSE stream: %s", ct, b.String())
	}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	return &sseStream{resp: resp, sc: sc}
}

// next returns the next non-empty line, or "" at the end of the stream.
func (s *sseStream) next() string {
	for s.sc.Scan() {
		if line := s.sc.Text(); line != "" {
			return line
		}
	}
	return ""
}

// TestSSEHygiene: streams outlive the server's WriteTimeout, carry
// keep-alive comments while the task is silent, and tell proxies not to
// buffer.
func TestSSEHygiene(t *testing.T) {
	const keepAlive = 40 * time.Millisecond
	e := newEnvServer(t, 6*keepAlive, nil, func(o *agentOptions) { o.KeepAlive = keepAlive })
	body := `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m","role":"ROLE_USER","parts":[{"text":"tck-cancel"}]}}}`
	s := openSSE(t, e, "POST", "/agents/conformance/jsonrpc", body, map[string]string{"A2A-Version": "1.0"})
	if s.resp.Header.Get("X-Accel-Buffering") != "no" || s.resp.Header.Get("Cache-Control") != "no-cache" {
		t.Fatalf("headers %v", s.resp.Header)
	}
	var taskID string
	keepAlives := 0
	// Twelve keep-alives span twice the WriteTimeout: the write deadline
	// must have been lifted for them to arrive.
	for keepAlives < 12 {
		line := s.next()
		switch {
		case line == "":
			t.Fatalf("stream ended after %d keep-alives", keepAlives)
		case line == ": keep-alive":
			keepAlives++
		case strings.HasPrefix(line, "data: ") && taskID == "":
			var resp struct {
				Result struct {
					Task *a2a.Task `json:"task"`
				} `json:"result"`
			}
			if err := json.Unmarshal([]byte(line[6:]), &resp); err != nil || resp.Result.Task == nil {
				t.Fatalf("first event %s, want the Task", line)
			}
			taskID = string(resp.Result.Task.ID)
		}
	}
	c := e.client(t, "conformance", bindings[0])
	if _, err := c.CancelTask(ctxT(t), &a2a.CancelTaskRequest{ID: a2a.TaskID(taskID)}); err != nil {
		t.Fatal(err)
	}
	for line := s.next(); line != ""; line = s.next() {
		if strings.Contains(line, "TASK_STATE_CANCELED") {
			return
		}
	}
	t.Fatal("the stream ended without the canceled status")
}

// TestResumeCursorChannels: metadata.afterSeq in a JSON-RPC body (v1.0
// and v0.3), in an HTTP+JSON subscribe body, and afterSeq in its query all
// replay exactly the events after the cursor.
func TestResumeCursorChannels(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("stream 6")))
	id := string(evs[0].(*a2a.Task).ID)
	const after = 4
	var want []int64
	for _, ev := range evs[1:] {
		if s := seqOf(ev); s > after {
			want = append(want, s)
		}
	}
	cases := []struct {
		name, method, path, body string
		header                   map[string]string
	}{
		{"jsonrpc v1.0", "POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SubscribeToTask","params":{"id":"` + id + `","metadata":{"afterSeq":4}}}`, map[string]string{"A2A-Version": "1.0"}},
		{"jsonrpc v0.3", "POST", "/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"tasks/resubscribe","params":{"id":"` + id + `","metadata":{"afterSeq":"4"}}}`, nil},
		{"rest body", "POST", "/agents/echo/rest/tasks/" + id + ":subscribe", `{"metadata":{"afterSeq":4}}`, nil},
		{"rest query", "GET", "/agents/echo/rest/tasks/" + id + ":subscribe?afterSeq=4", ``, nil},
		{"rest v0.3 header", "POST", "/agents/echo/rest/v1/tasks/" + id + ":subscribe", ``, map[string]string{agenta2a.LastEventIDHeader: "4"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := openSSE(t, e, tc.method, tc.path, tc.body, tc.header)
			var seqs []int64
			for line := s.next(); line != ""; line = s.next() {
				if !strings.HasPrefix(line, "data: ") {
					continue
				}
				if i := strings.Index(line, agenta2a.MetaSeq+`":`); i >= 0 {
					rest := line[i+len(agenta2a.MetaSeq)+2:]
					n, _ := strconv.ParseInt(rest[:strings.IndexAny(rest, ",}")], 10, 64)
					seqs = append(seqs, n)
				} else if len(seqs) > 0 {
					t.Fatalf("update without seq: %s", line)
				}
			}
			if !slices.Equal(seqs, want) {
				t.Fatalf("seqs %v, want %v", seqs, want)
			}
		})
	}
}

// TestSSEIDsAreSeqs: every update's SSE id is its event seq (the opening
// Task has none), on both bindings, so a browser's EventSource reconnects
// with a Last-Event-ID that resumes exactly after it.
func TestSSEIDsAreSeqs(t *testing.T) {
	e := newEnv(t)
	for _, b := range []struct{ path, body string }{
		{"/agents/echo/jsonrpc", `{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":{"messageId":"m-ids","role":"ROLE_USER","parts":[{"text":"stream 6 every 10ms"}]}}}`},
		{"/agents/echo/rest/message:stream", `{"message":{"messageId":"m-ids2","role":"ROLE_USER","parts":[{"text":"stream 6 every 10ms"}]}}`},
	} {
		s := openSSE(t, e, "POST", b.path, b.body, map[string]string{"A2A-Version": "1.0"})
		var ids []int64
		events, taskID := 0, ""
		for line := s.next(); line != ""; line = s.next() {
			switch {
			case strings.HasPrefix(line, "id:"):
				id, err := strconv.ParseInt(strings.TrimSpace(line[3:]), 10, 64)
				if err != nil {
					t.Fatalf("%s: SSE id %q is not an event seq", b.path, line)
				}
				ids = append(ids, id)
			case strings.HasPrefix(line, "data:"):
				if events++; taskID == "" {
					var v struct {
						ID     string `json:"id"`
						Result struct {
							Task struct {
								ID string `json:"id"`
							} `json:"task"`
						} `json:"result"`
						Task struct {
							ID string `json:"id"`
						} `json:"task"`
					}
					_ = json.Unmarshal([]byte(line[5:]), &v)
					taskID = v.Result.Task.ID + v.Task.ID
				}
			}
		}
		increasing := slices.IsSortedFunc(ids, func(a, b int64) int { return int(a - b) }) && len(slices.Compact(slices.Clone(ids))) == len(ids)
		if len(ids) != events-1 || !increasing {
			t.Fatalf("%s: ids %v for %d events, want one strictly increasing seq per update", b.path, ids, events)
		}
		// An EventSource reconnect: SubscribeToTask with Last-Event-ID.
		cut := ids[1]
		sub := `{"jsonrpc":"2.0","id":2,"method":"SubscribeToTask","params":{"id":"` + taskID + `"}}`
		r := openSSE(t, e, "POST", "/agents/echo/jsonrpc", sub, map[string]string{"A2A-Version": "1.0", "Last-Event-ID": strconv.FormatInt(cut, 10)})
		var resumed []int64
		for line := r.next(); line != ""; line = r.next() {
			if id, err := strconv.ParseInt(strings.TrimSpace(strings.TrimPrefix(line, "id:")), 10, 64); err == nil && strings.HasPrefix(line, "id:") {
				resumed = append(resumed, id)
			}
		}
		if !slices.Equal(resumed, ids[2:]) {
			t.Fatalf("%s: resumed after %d with ids %v, want %v", b.path, cut, resumed, ids[2:])
		}
	}
}
