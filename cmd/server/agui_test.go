package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
)

// aguiEvent is one event of an AG-UI stream with its SSE id.
type aguiEvent struct {
	id   string
	data string
	typ  string
}

// readAGUI reads an AG-UI SSE stream to its end.
func readAGUI(t *testing.T, res *http.Response) []aguiEvent {
	t.Helper()
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(res.Body)
		t.Fatalf("status %d: %s", res.StatusCode, b)
	}
	var out []aguiEvent
	scanAGUI(t, res.Body, func(ev aguiEvent) { out = append(out, ev) })
	return out
}

// scanAGUI hands each event of an AG-UI SSE stream to each as it arrives,
// until the stream ends.
func scanAGUI(t *testing.T, body io.Reader, each func(aguiEvent)) {
	t.Helper()
	var cur aguiEvent
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "id: "):
			cur.id = line[4:]
		case strings.HasPrefix(line, "data: "):
			cur.data = line[6:]
			var v struct{ Type string }
			if err := json.Unmarshal([]byte(cur.data), &v); err != nil {
				t.Errorf("data %q: %v", cur.data, err) // not Fatal: may run on a reader goroutine
			}
			cur.typ = v.Type
		case line == "" && cur.data != "":
			each(cur)
			cur = aguiEvent{}
		}
	}
}

func aguiInput(thread, run, text string) string {
	return fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[{"id":"%s-m","role":"user","content":%q}]}`, thread, run, run, text)
}

// TestAGUIBadInput: a RunAgentInput the face refuses is a 4xx naming the
// member at fault, and nothing is stored for its thread.
func TestAGUIBadInput(t *testing.T) {
	s := start(t)
	// A parked thread and a finished one, for the resume and runId cases.
	parked := readAGUI(t, s.post(t, "/ag-ui/agents/guarded", aguiInput("t-parked", "r-parked", "delete notes.txt")))
	if last := parked[len(parked)-1].data; !strings.Contains(last, `"interrupt"`) {
		t.Fatalf("guarded run ended with %s, want an interrupt", last)
	}
	readAGUI(t, s.post(t, "/ag-ui/agents/echo", aguiInput("t-done", "r-done", "hello")))

	cases := []struct {
		name, agent, body, thread string
		status                    int
		field                     string
	}{
		{"threadId of the wrong type", "echo", `{"threadId":5,"runId":"r1","messages":[]}`, "", 400, "threadId"},
		{"messages not an array", "echo", `{"threadId":"t-bad1","runId":"r1","messages":{}}`, "t-bad1", 400, "messages"},
		{"no runId", "echo", `{"threadId":"t-bad2","messages":[]}`, "t-bad2", 400, "runId"},
		{"no messages", "echo", `{"threadId":"t-bad3","runId":"r3"}`, "t-bad3", 400, "messages"},
		{"unknown role", "echo", `{"threadId":"t-bad4","runId":"r4","messages":[{"id":"m","role":"robot","content":"x"}]}`, "t-bad4", 400, "messages[0].role"},
		{"last message not the user's", "echo", `{"threadId":"t-bad5","runId":"r5","messages":[{"id":"m","role":"assistant","content":"x"}]}`, "t-bad5", 400, "messages[0].role"},
		{"blank content", "echo", `{"threadId":"t-bad6","runId":"r6","messages":[{"id":"m","role":"user","content":"  "}]}`, "t-bad6", 400, "messages[0].content"},
		{"not JSON", "echo", `threadId=x`, "", 400, ""},
		{"unknown agent", "nobody", aguiInput("t-bad7", "r7", "hi"), "t-bad7", 404, ""},
		{"resume on a thread that waits for nothing", "echo", `{"threadId":"t-bad8","runId":"r8","messages":[],"resume":[{"interruptId":"x","status":"resolved"}]}`, "t-bad8", 409, "resume"},
		{"resume of an interrupt that does not exist", "guarded", `{"threadId":"t-parked","runId":"r9","messages":[],"resume":[{"interruptId":"nope","status":"resolved"}]}`, "", 400, "resume[0].interruptId"},
		{"resume with a bad status", "guarded", `{"threadId":"t-parked","runId":"r10","messages":[],"resume":[{"interruptId":"r-parked.call_0_0","status":"maybe"}]}`, "", 400, "resume[0].status"},
		{"runId of another thread", "echo", aguiInput("t-bad11", "r-done", "hi"), "t-bad11", 409, "runId"},
		{"runId of another agent", "assistant", aguiInput("t-done", "r-done", "hi"), "", 409, "runId"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			res := s.post(t, "/ag-ui/agents/"+c.agent, c.body)
			p := readJSON[struct {
				Field  string `json:"field"`
				Detail string `json:"detail"`
			}](t, res, c.status)
			if p.Field != c.field {
				t.Errorf("field %q, want %q (%s)", p.Field, c.field, p.Detail)
			}
			if c.thread != "" {
				runs := readJSON[struct {
					Runs []json.RawMessage `json:"runs"`
				}](t, s.get(t, "/v1/runs?context="+c.thread), 200)
				if len(runs.Runs) != 0 {
					t.Errorf("thread %s has %d runs after a refused request", c.thread, len(runs.Runs))
				}
			}
		})
	}
	// The parked run still waits, untouched by the refused answers.
	run := readJSON[runJSON](t, s.get(t, "/v1/runs/r-parked"), 200)
	if run.Status != "input-required" {
		t.Errorf("parked run is %s", run.Status)
	}
}

// TestAGUIIdempotentAndResumable: the same runId twice replays the one
// run (no second run); the run's events GET with Last-Event-ID gives
// exactly the rest; connect replays it whole.
func TestAGUIIdempotentAndResumable(t *testing.T) {
	s := start(t)
	first := readAGUI(t, s.post(t, "/ag-ui/agents/echo", aguiInput("t-idem", "r-idem", "stream 12")))
	again := readAGUI(t, s.post(t, "/ag-ui/agents/echo", aguiInput("t-idem", "r-idem", "stream 12")))
	if got, want := joinData(again), joinData(first); got != want {
		t.Errorf("second POST of the runId:\n%s\nwant the first's:\n%s", got, want)
	}
	runs := readJSON[struct {
		Runs []json.RawMessage `json:"runs"`
	}](t, s.get(t, "/v1/runs?context=t-idem"), 200)
	if len(runs.Runs) != 1 {
		t.Errorf("%d runs, want 1", len(runs.Runs))
	}
	for _, cut := range []int{0, 3, len(first) / 2, len(first) - 2} {
		rest := readAGUI(t, s.get(t, "/ag-ui/agents/echo/threads/t-idem/runs/r-idem/events", "Last-Event-ID", first[cut].id))
		if got, want := joinData(rest), joinData(first[cut+1:]); got != want {
			t.Errorf("after %s:\n%s\nwant:\n%s", first[cut].id, got, want)
		}
	}
	connected := readAGUI(t, s.post(t, "/ag-ui/agents/echo/connect", `{"threadId":"t-idem","messages":[]}`))
	if got, want := joinData(connected), joinData(first); got != want {
		t.Errorf("connect:\n%s\nwant:\n%s", got, want)
	}
}

func joinData(evs []aguiEvent) string {
	var b strings.Builder
	for _, e := range evs {
		b.WriteString(e.id + " " + e.data + "\n")
	}
	return b.String()
}

// TestUIFacesAuth: the UI faces sit behind the same authentication, scopes
// and tenants as REST: no key is 401, a read-only key cannot start a run,
// and one tenant's runs are invisible to another.
func TestUIFacesAuth(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	run := aguiInput("t-auth", "r-auth", "hello")
	chat := `{"id":"c-auth","messages":[{"id":"u1","role":"user","parts":[{"type":"text","text":"hello"}]}]}`
	for _, c := range []struct {
		key, path, body string
		status          int
	}{
		{"", "/ag-ui/agents/echo", run, http.StatusUnauthorized},
		{readerKey, "/ag-ui/agents/echo", run, http.StatusForbidden},
		{"", "/ai-sdk/agents/echo/chat", chat, http.StatusUnauthorized},
		{readerKey, "/ai-sdk/agents/echo/chat", chat, http.StatusForbidden},
		{acmeKey, "/ag-ui/agents/echo", run, http.StatusOK},
		{acmeKey, "/ai-sdk/agents/echo/chat", chat, http.StatusOK},
	} {
		if got := s.call(t, c.key, http.MethodPost, c.path, c.body); got.status != c.status {
			t.Errorf("POST %s with key %q: %d, want %d: %s", c.path, c.key, got.status, c.status, got.body)
		}
	}
	events := "/ag-ui/agents/echo/threads/t-auth/runs/r-auth/events"
	if got := s.call(t, acmeKey, http.MethodGet, events, ""); got.status != http.StatusOK || !strings.Contains(got.body, "RUN_FINISHED") {
		t.Errorf("acme reads its run: %d %s", got.status, got.body)
	}
	if got := s.call(t, globexKey, http.MethodGet, events, ""); got.status != http.StatusNotFound {
		t.Errorf("globex reads acme's run: %d, want 404: %s", got.status, got.body)
	}
	// Another tenant may use the same runId for a run of its own.
	if got := s.call(t, globexKey, http.MethodPost, "/ag-ui/agents/echo", run); got.status != http.StatusOK {
		t.Errorf("globex's run with acme's runId: %d: %s", got.status, got.body)
	}
}

// TestAGUIBusyThreadAndCancel: a second run on a thread whose run is
// still going is refused as the agent's multitask policy says (echo:
// reject, 409), and the AG-UI cancel route ends the first with the
// cancelled outcome.
func TestAGUIBusyThreadAndCancel(t *testing.T) {
	s := start(t)
	res := s.post(t, "/ag-ui/agents/echo", aguiInput("t-busy", "r-busy", "stream 300 every 20ms"))
	defer res.Body.Close()
	events := make(chan aguiEvent, 1024)
	go func() {
		defer close(events)
		scanAGUI(t, res.Body, func(ev aguiEvent) { events <- ev })
	}()
	for ev := range events {
		if ev.typ == "TEXT_MESSAGE_CONTENT" {
			break
		}
	}
	second := readJSON[struct {
		Status int `json:"status"`
	}](t, s.post(t, "/ag-ui/agents/echo", aguiInput("t-busy", "r-busy-2", "hello")), http.StatusConflict)
	if second.Status != http.StatusConflict {
		t.Errorf("problem status %d", second.Status)
	}
	c := s.post(t, "/ag-ui/agents/echo/threads/t-busy/runs/r-busy/cancel", "")
	c.Body.Close()
	if c.StatusCode != http.StatusOK && c.StatusCode != http.StatusAccepted {
		t.Fatalf("cancel: %d", c.StatusCode)
	}
	var last aguiEvent
	for ev := range events {
		last = ev
	}
	if last.typ != "RUN_FINISHED" || !strings.Contains(last.data, `"cancelled"`) {
		t.Errorf("the stream ended with %s, want RUN_FINISHED cancelled", last.data)
	}
}
