package main

import (
	"bufio"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// Signals on running runs (pause, resume, feedback, retry, cancel)
// through the HTTP API of a real server, on memstore and on PostgreSQL: a
// loop agent on a scripted model whose first turn streams slowly and calls
// the calculator, and whose second turn streams the answer ("stepper");
// the same agent under an attempt timeout its two turns together pass but
// one alone does not ("flaky", for retry); and the demo's echo agent.

// signalsConfig writes the demo configuration plus the test agents.
func signalsConfig(t *testing.T) string {
	t.Helper()
	return demoConfigWith(t, func(cfg map[string]any) {
		cfg["providers"].(map[string]any)["signals-script"] = map[string]any{"type": "scripted", "rules": []any{
			map[string]any{"name": "steered", "match": `^steer (.+)$`, "reply": "Steered: {{index .Groups 1}}."},
			map[string]any{"name": "answer", "after_tool": "calculator", "count": map[string]any{"number": "20", "format": "ans%d"}, "delay": "30ms"},
			map[string]any{"name": "work", "match": `^work (\d+)$`, "count": map[string]any{"number": "{{index .Groups 1}}", "format": "tok%d"}, "delay": "30ms",
				"tool_calls": []any{map[string]any{"name": "calculator", "arguments": map[string]any{"expression": "6*7"}}}},
		}}
		loopAgent := func(id string) map[string]any {
			return map[string]any{"id": id, "engine": "loop", "provider": "signals-script", "tools": []string{"calculator"}, "max_iterations": 4}
		}
		flaky := loopAgent("flaky")
		// Turn 1 (20 tokens) and turn 2 (20 tokens), 30 ms apart each, take
		// 1.2 s together: over the timeout; the retried turn 2 alone is not.
		flaky["timeout"] = "1s"
		cfg["agents"] = append(cfg["agents"].([]any), loopAgent("stepper"), flaky)
	})
}

// sigRun is a run as the signals API answers it.
type sigRun struct {
	approvalRun
	StatusMessage *struct {
		Parts []struct {
			Type string         `json:"type"`
			Text string         `json:"text"`
			Data map[string]any `json:"data"`
		} `json:"parts"`
	} `json:"status_message"`
	Attempt int `json:"attempt"`
}

// signal posts a signal and returns the answer's status code, run and body.
func (s *server) signal(t *testing.T, runID, body string) (int, sigRun, string) {
	t.Helper()
	res := s.post(t, "/v1/runs/"+runID+"/signals", body)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	var run sigRun
	_ = json.Unmarshal(b, &run)
	return res.StatusCode, run, string(b)
}

// follow is a run's event stream, read as the test needs.
type follow struct {
	t   *testing.T
	br  *bufio.Reader
	evs []event
}

func (s *server) follow(t *testing.T, runID string) *follow {
	t.Helper()
	res := s.get(t, "/v1/runs/"+runID+"/events")
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: %d", runID, res.StatusCode)
	}
	t.Cleanup(func() { res.Body.Close() })
	return &follow{t: t, br: bufio.NewReader(res.Body)}
}

// until reads events until one satisfies ok, and returns it.
func (f *follow) until(what string, ok func(event) bool) event {
	f.t.Helper()
	for {
		ev, err := readEvent(f.br)
		if err != nil {
			f.t.Fatalf("waiting for %s after %d events: %v", what, len(f.evs), err)
		}
		f.evs = append(f.evs, ev)
		if ok(ev) {
			return ev
		}
	}
}

func isType(typ string) func(event) bool { return func(ev event) bool { return ev.typ == typ } }

func isStatus(state string) func(event) bool {
	return func(ev event) bool { return ev.typ == "status" && ev.data["state"] == state }
}

// startRun posts text to agent without waiting and returns the run's id.
func (s *server) startRun(t *testing.T, agent, text string) string {
	t.Helper()
	body, _ := json.Marshal(map[string]string{"text": text})
	run := readJSON[runJSON](t, s.post(t, "/v1/agents/"+agent+"/messages?wait=false", string(body)), http.StatusAccepted)
	return run.ID
}

// words is the sequence of ans1 … ansN.
func words(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = prefix + strconv.Itoa(i+1)
	}
	return out
}

// tokensOf lists the words of the text deltas of evs, each delta apart
// (a turn's first token carries no space before it).
func tokensOf(evs []event) []string {
	var out []string
	for _, ev := range evs {
		if ev.typ == "delta" {
			text, _ := ev.data["text"].(string)
			out = append(out, strings.Fields(text)...)
		}
	}
	return out
}

// signalsOf lists the types of the signal events in evs.
func signalsOf(evs []event) []string {
	var out []string
	for _, ev := range evs {
		if ev.typ == "signal" {
			out = append(out, ev.data["signal"].(string))
		}
	}
	return out
}

// firstSeq is the seq of the first event satisfying ok (0: none).
func firstSeq(evs []event, ok func(event) bool) int64 {
	for _, ev := range evs {
		if ok(ev) {
			return ev.seq
		}
	}
	return 0
}

func TestSignalPauseResume(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, signalsConfig(t), dsn)
		id := s.startRun(t, "stepper", "work 20")
		f := s.follow(t, id)
		f.until("the first token", isType("delta"))
		if code, run, body := s.signal(t, id, `{"type":"pause","text":"lunch"}`); code != http.StatusAccepted || run.Status != "working" {
			t.Fatalf("pause: %d %s", code, body)
		}
		f.until("the pause", isStatus("input-required"))
		paused := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK)
		if paused.Status != "paused" || paused.StatusMessage == nil || !strings.Contains(paused.StatusMessage.Parts[0].Text, "Paused by the user (lunch)") {
			t.Fatalf("paused run: %s %+v", paused.Status, paused.StatusMessage)
		}
		// The safe boundary: the turn that was streaming finished, and
		// its tool call ran, before the run stopped.
		pauseAt := firstSeq(f.evs, func(ev event) bool { return ev.typ == "signal" })
		resultAt := firstSeq(f.evs, func(ev event) bool { return ev.typ == "delta" && ev.data["tool_result"] != nil })
		if pauseAt == 0 || resultAt < pauseAt || !slices.Equal(tokensOf(f.evs), words("tok", 20)) {
			t.Fatalf("before the pause: signal at %d, tool result at %d, tokens %v", pauseAt, resultAt, tokensOf(f.evs))
		}
		// Refused: a second pause; feedback is fine (below).
		if code, _, body := s.signal(t, id, `{"type":"pause"}`); code != http.StatusConflict || !strings.Contains(body, "paused already") {
			t.Fatalf("second pause: %d %s", code, body)
		}
		if code, run, body := s.signal(t, id, `{"type":"resume"}`); code != http.StatusAccepted || run.Status != "working" {
			t.Fatalf("resume: %d %s", code, body)
		}
		s.follow(t, id).until("the end", isStatus("completed"))

		// One continuous log: dense seqs from run.start to run.end, every
		// token once, two attempts, the signals in it, the answer whole.
		evs := runEvents(t, s, id)
		checkSeqs(t, evs)
		if got, want := tokensOf(evs), append(words("tok", 20), words("ans", 20)...); !slices.Equal(got, want) {
			t.Fatalf("tokens of the log:\n%v\nwant\n%v", got, want)
		}
		if got := signalsOf(evs); !slices.Equal(got, []string{"pause", "resume"}) {
			t.Fatalf("signal events: %v", got)
		}
		starts := 0
		for _, ev := range evs {
			if ev.typ == "run.start" {
				starts++
			}
		}
		done := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK)
		if starts != 2 || done.Status != "completed" || done.Attempt != 2 || done.lastText() != strings.Join(words("ans", 20), " ") {
			t.Fatalf("done: %d run.starts, %s attempt %d, %q", starts, done.Status, done.Attempt, done.lastText())
		}
		if code, _, _ := s.signal(t, id, `{"type":"resume"}`); code != http.StatusConflict {
			t.Fatalf("resume of a completed run: %d, want 409", code)
		}
	})
}

func TestSignalFeedback(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, signalsConfig(t), dsn)
		// To a running run: the next model turn answers it.
		id := s.startRun(t, "stepper", "work 20")
		f := s.follow(t, id)
		f.until("the first token", isType("delta"))
		if code, _, body := s.signal(t, id, `{"type":"feedback","text":"steer left"}`); code != http.StatusAccepted {
			t.Fatalf("feedback: %d %s", code, body)
		}
		f.until("the end", isType("run.end"))
		done := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK)
		if done.Status != "completed" || done.lastText() != "Steered: left." {
			t.Fatalf("after feedback: %s %q", done.Status, done.lastText())
		}
		var fed bool
		for _, m := range done.Messages {
			fed = fed || m.Role == "user" && len(m.Parts) > 0 && m.Parts[0].Text == "steer left"
		}
		if !fed {
			t.Fatalf("the feedback is not in the run's transcript: %+v", done.Messages)
		}

		// To a paused run: it resumes with the feedback.
		id = s.startRun(t, "stepper", "work 20")
		f = s.follow(t, id)
		f.until("the first token", isType("delta"))
		s.signal(t, id, `{"type":"pause"}`)
		f.until("the pause", isStatus("input-required"))
		if code, run, body := s.signal(t, id, `{"type":"feedback","text":"steer right"}`); code != http.StatusAccepted || run.Status != "working" {
			t.Fatalf("feedback to a paused run: %d %s", code, body)
		}
		s.follow(t, id).until("the end", isStatus("completed"))
		if done := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK); done.lastText() != "Steered: right." {
			t.Fatalf("after feedback to a paused run: %q", done.lastText())
		}
		if got := signalsOf(runEvents(t, s, id)); !slices.Equal(got, []string{"pause", "feedback"}) {
			t.Fatalf("signal events: %v", got)
		}
	})
}

func TestSignalRetry(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, signalsConfig(t), dsn)
		id := s.startRun(t, "flaky", "work 20")
		f := s.follow(t, id)
		f.until("the failure", isStatus("failed"))
		failed := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK)
		if !strings.Contains(string(failed.Error), "timeout") {
			t.Fatalf("flaky: %s %s, want a timeout", failed.Status, failed.Error)
		}
		if code, run, body := s.signal(t, id, `{"type":"retry"}`); code != http.StatusAccepted || run.Status != "working" {
			t.Fatalf("retry: %d %s", code, body)
		}
		s.follow(t, id).until("the end", isStatus("completed"))
		done := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK)
		if done.Attempt != 2 || done.lastText() != strings.Join(words("ans", 20), " ") {
			t.Fatalf("retried: attempt %d, %q", done.Attempt, done.lastText())
		}
		// From the checkpoint: the first turn was not taken again.
		evs := runEvents(t, s, id)
		checkSeqs(t, evs)
		got := tokensOf(evs)
		if len(got) < 40 || !slices.Equal(got[:20], words("tok", 20)) || slices.Contains(got[20:], "tok1") ||
			!slices.Equal(got[len(got)-20:], words("ans", 20)) {
			t.Fatalf("tokens: %v", got)
		}
		if got := signalsOf(evs); !slices.Equal(got, []string{"retry"}) {
			t.Fatalf("signal events: %v", got)
		}
		if code, _, body := s.signal(t, id, `{"type":"retry"}`); code != http.StatusConflict || !strings.Contains(body, "only a failed run") {
			t.Fatalf("retry of a completed run: %d %s", code, body)
		}
	})
}

func TestSignalsRefused(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, signalsConfig(t), dsn)
		done := readJSON[runJSON](t, s.post(t, "/v1/agents/echo/messages", `{"text":"hello"}`), http.StatusOK)
		for _, c := range []struct {
			body string
			code int
			says string
		}{
			{`{"type":"nap"}`, http.StatusBadRequest, `nap`},
			{`{"type":"feedback"}`, http.StatusBadRequest, "text"},
			{`{"type":"pause","extra":1}`, http.StatusBadRequest, "extra"},
			{`{"type":"pause"}`, http.StatusConflict, "finished"},
			{`{"type":"resume"}`, http.StatusConflict, "not paused"},
			{`{"type":"feedback","text":"hi"}`, http.StatusConflict, "finished"},
			{`{"type":"retry"}`, http.StatusConflict, "only a failed run"},
		} {
			if code, _, body := s.signal(t, done.ID, c.body); code != c.code || !strings.Contains(body, c.says) {
				t.Errorf("%s: %d %s; want %d saying %s", c.body, code, body, c.code, c.says)
			}
		}
		if code, _, body := s.signal(t, "0190c0de-0000-7000-8000-000000000000", `{"type":"pause"}`); code != http.StatusNotFound {
			t.Errorf("unknown run: %d %s", code, body)
		}
		// Cancel is the cancel route's: the run ends canceled, the signal
		// in its log.
		id := s.startRun(t, "stepper", "work 20")
		f := s.follow(t, id)
		f.until("the first token", isType("delta"))
		if code, _, body := s.signal(t, id, `{"type":"cancel"}`); code != http.StatusAccepted {
			t.Fatalf("cancel: %d %s", code, body)
		}
		f.until("the end", isStatus("canceled"))
		if got := signalsOf(runEvents(t, s, id)); !slices.Equal(got, []string{"cancel"}) {
			t.Fatalf("signal events: %v", got)
		}
	})
}

// TestSignalPauseTooLate: the echo agent answers in one turn, the final
// answer: a pause that arrives while it streams finds no boundary before
// the end, and the run completes with every token once.
func TestSignalPauseTooLate(t *testing.T) {
	s := startStore(t, signalsConfig(t), "")
	id := s.startRun(t, "echo", "stream 30 every 20ms")
	f := s.follow(t, id)
	f.until("the first token", isType("delta"))
	if code, _, body := s.signal(t, id, `{"type":"pause"}`); code != http.StatusAccepted {
		t.Fatalf("pause: %d %s", code, body)
	}
	f.until("the end", isType("run.end"))
	evs := runEvents(t, s, id)
	checkSeqs(t, evs)
	if !slices.Equal(tokensOf(evs), toks(30)) || !slices.Equal(signalsOf(evs), []string{"pause"}) {
		t.Fatalf("tokens %v, signals %v", deltas(evs), signalsOf(evs))
	}
	if run := readJSON[sigRun](t, s.get(t, "/v1/runs/"+id), http.StatusOK); run.Status != "completed" {
		t.Fatalf("echo: %s", run.Status)
	}
}

// TestSignalPausedOverA2A: an A2A client sees a paused task as
// input-required with a status message saying so, and a message to the
// task resumes it as its feedback.
func TestSignalPausedOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, signalsConfig(t), dsn)
		id := s.startRun(t, "stepper", "work 20")
		f := s.follow(t, id)
		f.until("the first token", isType("delta"))
		s.signal(t, id, `{"type":"pause"}`)
		f.until("the pause", isStatus("input-required"))

		iface := &a2a.AgentInterface{URL: s.base + "/agents/stepper/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
		c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface})
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = c.Destroy() }()
		task, err := c.GetTask(t.Context(), &a2a.GetTaskRequest{ID: a2a.TaskID(id)})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State != a2a.TaskStateInputRequired || task.Status.Message == nil {
			t.Fatalf("paused task over A2A: %+v", task.Status)
		}
		var text string
		var paused bool
		for _, p := range task.Status.Message.Parts {
			text += p.Text()
			if d, ok := p.Data().(map[string]any); ok {
				_, paused = d["paused"]
			}
		}
		if !strings.Contains(text, "Paused by the user") || !paused {
			t.Fatalf("status message: %q, paused data part %v", text, paused)
		}
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("steer home"))
		msg.TaskID = task.ID
		res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg})
		if err != nil {
			t.Fatal(err)
		}
		done, ok := res.(*a2a.Task)
		if !ok || done.Status.State != a2a.TaskStateCompleted {
			t.Fatalf("after the message: %#v", res)
		}
		if last := done.History[len(done.History)-1].Parts[0].Text(); last != "Steered: home." {
			t.Fatalf("answer: %q", last)
		}
	})
}
