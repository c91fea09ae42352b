package flow_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// oneFile compiles a one-file flow written inline.
func oneFile(t *testing.T, yaml string) (*flow.Engine, *effects) {
	t.Helper()
	eff := &effects{}
	reg := registry(t, eff, "rent_car")
	spec, err := flow.ParseFile([]byte(yaml), "inline")
	if err != nil {
		t.Fatal(err)
	}
	return newEngine(t, compileSpec(t, spec, reg), reg), eff
}

// Transitions are tried in order and the first that holds wins; the
// calculator's structured result is saved and routed on; tool_result
// carries the call id.
func TestTransitionsFirstMatchWins(t *testing.T) {
	reg := registry(t, &effects{})
	eng := newEngine(t, compile(t, "single.yaml", reg), reg)
	tests := []struct{ name, want string }{
		{"Ada", "Hello, Countess!"},
		{"Bob", "Hello, Bob!"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			h := enginetest.NewRecordingHost()
			h.AskUserFn = replies(tc.name)
			out, err := execute(t, eng, engine.Run{ID: "r"}, userBoard("hi"), h)
			if err != nil {
				t.Fatal(err)
			}
			want := []string{tc.want, "The answer is 42 (r:calc:1)."}
			if got := said(out); strings.Join(got, "|") != strings.Join(want, "|") {
				t.Errorf("said %q, want %q", got, want)
			}
		})
	}
}

// Every route out of a node, each in a small flow of its own.
func TestRoutes(t *testing.T) {
	tests := []struct {
		name    string
		flow    string
		first   string   // the message that starts the run
		answers []string // replies to prompts, in order
		said    string   // the last message said; "" for none
		err     string   // fragment of the run's error; "" for success
		class   errdefs.Class
	}{
		{name: "on_error", flow: `
nodes:
  - {id: start, do: rent_car, on_error: sorry, to: ok}
  - {id: sorry, content: "Failed: {{ .sys.error }}"}
  - {id: ok, content: fine}`, said: "Failed: rent_car: rent_car service unavailable"},
		{name: "on_denied of an action", flow: `
nodes:
  - {id: start, do: forbidden, on_denied: denied, to: ok}
  - {id: denied, content: not allowed}
  - {id: ok, content: fine}`, said: "not allowed"},
		{name: "denied without on_denied fails", flow: `
nodes:
  - {id: start, do: forbidden, to: ok}
  - {id: ok, content: fine}`, err: `node "start": tool forbidden failed: policy forbids it`, class: errdefs.ClassForbidden},
		{name: "an action the user does not approve", flow: `
nodes:
  - {id: start, do: ping, metadata: {confirm_msg: "Run ping?"}, on_denied: denied, to: ran}
  - {id: denied, content: not run}
  - {id: ran, content: "ran: {{ .sys.ans }}"}`, answers: []string{"no"}, said: "not run"},
		{name: "an action the user approves", flow: `
nodes:
  - {id: start, do: ping, metadata: {confirm_msg: "Run ping?"}, on_denied: denied, to: ran}
  - {id: denied, content: not run}
  - {id: ran, content: "ran: {{ .sys.ans }}"}`, answers: []string{"yes"}, said: "ran: ping done"},
		{name: "explicit rollback completes", flow: `
nodes:
  - {id: start, do: reserve_hotel, undo: {name: cancel_hotel, args: {id: "{{ .tool_result.id }}"}}, to: check}
  - id: check
    content: "rolling back"
    to: rollback`, said: "rolling back"},
		{name: "options route answers", flow: `
nodes:
  - id: start
    options: [{text: Inputs, to: inputs}, {text: Loop, to: start}]
    to: choice
  - {id: inputs, content: inputs chosen}
  - {id: choice, content: "fallback for {{ .sys.ans }}"}`, answers: []string{"inputs"}, said: "inputs chosen"},
		{name: "options fall back to to", flow: `
nodes:
  - id: start
    options: [{text: Inputs, to: inputs}]
    to: choice
  - {id: inputs, content: inputs chosen}
  - {id: choice, content: "fallback for '{{ .sys.ans }}'"}`, answers: []string{""}, said: "fallback for ''"},
		{name: "choice by number, saved as written", flow: `
nodes:
  - {id: start, input_type: choice, input_options: [Red, Blue], save_to: color, transitions: [{condition: "input == 'Blue'", to: blue}, {to: other}]}
  - {id: blue, content: "{{ .color }}!"}
  - {id: other, content: other}`, answers: []string{"2"}, said: "Blue!"},
		{name: "int input re-asks until a number", flow: `
nodes:
  - {id: start, input_type: int, save_to: num, transitions: [{condition: "num > 2", to: big}, {to: small}]}
  - {id: big, content: "big {{ .num }}"}
  - {id: small, content: small}`, answers: []string{"three", "3"}, said: "big 3"},
		{name: "an input with no matching route asks again", flow: `
nodes:
  - {id: start, wait: true, transitions: [{condition: "input == 'yes'", to: agreed}, {condition: "input == 'no'", to: refused}]}
  - {id: agreed, content: yes!}
  - {id: refused, content: no!}`, answers: []string{"maybe", "no"}, said: "no!"},
		{name: "a text node with no matching route fails", flow: `
nodes:
  - {id: start, content: hi, transitions: [{condition: "input == 'x'", to: x}]}
  - {id: x, content: x}`, err: `node "start": transitions: no condition holds`, class: errdefs.ClassInternal},
		{name: "a condition on a missing key fails naming it", flow: `
nodes:
  - {id: start, content: hi, transitions: [{condition: "age > 3", to: x}, {to: x}]}
  - {id: x, content: x}`, err: `node "start": transitions[0]: condition "age > 3": no such attribute`, class: errdefs.ClassInternal},
		{name: "required_context missing", flow: `
nodes:
  - {id: start, required_context: [api_key, user_id], content: "{{ .api_key }}"}`, first: `{"api_key":"k"}`,
			err: `node "start": required_context: key "user_id" is missing`, class: errdefs.ClassInternal},
		{name: "required_context from the first message", flow: `
nodes:
  - {id: start, required_context: [api_key], content: "key {{ .api_key }}"}`, first: `{"api_key":"k"}`, said: "key k"},
		{name: "context_schema mismatch", flow: `
nodes:
  - {id: start, context_schema: {api_key: string, retries: int, tags: [string]}, content: ok}`,
			first: `{"api_key":"k","retries":"three","tags":["a"]}`, err: `node "start": context_schema.retries: want int, the context holds string three`, class: errdefs.ClassInternal},
		{name: "context_schema satisfied", flow: `
nodes:
  - {id: start, context_schema: {api_key: string, retries: int, tags: [string]}, content: "{{ .retries }} {{ index .tags 1 }}"}`,
			first: `{"api_key":"k","retries":3,"tags":["a","b"]}`, said: "3 b"},
		{name: "flow context and coalesce", flow: `
context: {b: "", c: third}
nodes:
  - {id: start, content: "{{ coalesce .a .b .c }} {{ toJson .c }}"}`, said: `third "third"`},
		{name: "first message text is the first input", flow: `
nodes:
  - {id: start, content: "hi", transitions: [{condition: "input == 'refund'", to: r}, {to: o}]}
  - {id: r, content: "refund path"}
  - {id: o, content: other}`, first: "refund", said: "refund path"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, _ := oneFile(t, tc.flow)
			h := enginetest.NewRecordingHost()
			h.AskUserFn = replies(tc.answers...)
			board := userBoard("go")
			if strings.HasPrefix(tc.first, "{") {
				board = engine.NewBoard()
				board.AppendChannelMessage(engine.MainChannel, model.Message{Role: model.RoleUser,
					Parts: []model.Part{{Type: model.PartData, Data: []byte(tc.first)}}})
			} else if tc.first != "" {
				board = userBoard(tc.first)
			}
			out, err := execute(t, eng, engine.Run{ID: "r"}, board, h)
			if tc.err == "" && err != nil || tc.err != "" && (err == nil || !strings.Contains(err.Error(), tc.err)) {
				t.Fatalf("err = %v, want %q", err, tc.err)
			}
			if tc.err != "" && errdefs.ClassOf(err) != tc.class {
				t.Errorf("class %q, want %q", errdefs.ClassOf(err), tc.class)
			}
			if s := said(out); tc.said != "" && (len(s) == 0 || s[len(s)-1] != tc.said) {
				t.Errorf("said %q, want last %q", s, tc.said)
			}
			if n := len(h.Prompts()); n != len(tc.answers) {
				t.Errorf("%d prompts for %d answers", n, len(tc.answers))
			}
		})
	}
}

// waitForever is an AskUser that never answers until its context ends.
func waitForever(ctx context.Context, _ engine.UserPrompt) (engine.UserReply, error) {
	<-ctx.Done()
	return engine.UserReply{}, ctx.Err()
}

// An input node's timeout raises the timeout signal: on_timeout takes it,
// and without a handler the run fails with a Timeout error.
func TestInputTimeout(t *testing.T) {
	handled, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, timeout: 20ms, on_timeout: late, to: on_time}
  - {id: late, content: too late}
  - {id: on_time, content: on time}`)
	h := enginetest.NewRecordingHost()
	h.AskUserFn = waitForever
	out, err := execute(t, handled, engine.Run{ID: "r"}, userBoard("go"), h)
	if err != nil || strings.Join(said(out), "|") != "too late" {
		t.Fatalf("err %v, said %q", err, said(out))
	}
	if d := h.Prompts()[0].Metadata["deadline"]; d == "" {
		t.Errorf("prompt metadata lacks the deadline: %v", h.Prompts()[0].Metadata)
	}

	unhandled, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, timeout: 20ms, to: done}
  - {id: done, content: done}`)
	h = enginetest.NewRecordingHost()
	h.AskUserFn = waitForever
	if _, err := execute(t, unhandled, engine.Run{ID: "r"}, userBoard("go"), h); !errdefs.IsTimeout(err) || !strings.Contains(err.Error(), `node "start": no answer within 20ms`) {
		t.Fatalf("err = %v, want a Timeout naming the node", err)
	}
}

// A reply that reaches a parked run after the node's timeout is a
// timeout too: the deadline is kept in the checkpoint.
func TestTimeoutOfAParkedQuestion(t *testing.T) {
	now := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	reg := registry(t, &effects{})
	spec, err := flow.ParseFile([]byte(`
nodes:
  - {id: start, wait: true, timeout: 1m, on_timeout: late, to: on_time}
  - {id: late, content: too late}
  - {id: on_time, content: on time}`), "parked")
	if err != nil {
		t.Fatal(err)
	}
	clock := func() time.Time { return now }
	eng, err := flow.New(flow.Config{Flow: compileSpec(t, spec, reg), Tools: reg, Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		wait time.Duration
		want string
	}{{30 * time.Second, "on time"}, {2 * time.Minute, "too late"}} {
		h := newParkingHost()
		if _, err := execute(t, eng, engine.Run{ID: "r"}, userBoard("go"), h); !errors.Is(err, errParked) {
			t.Fatalf("err = %v, want parked", err)
		}
		now = now.Add(tc.wait)
		out, _, err := converseFrom(t, eng, h, "r", "hello")
		if err != nil || strings.Join(said(out), "|") != tc.want {
			t.Errorf("after %v: err %v, said %q, want %q", tc.wait, err, said(out), tc.want)
		}
	}
}

// converseFrom resumes a parked run from its latest checkpoint with the
// given answers.
func converseFrom(t *testing.T, eng engine.Engine, h *parkingHost, runID string, answers ...string) (*engine.Board, int, error) {
	t.Helper()
	var (
		board *engine.Board
		err   = errParked
		used  int
	)
	for errors.Is(err, errParked) && used < len(answers) {
		h.mu.Lock()
		h.reply = replyOf(answers[used])
		h.mu.Unlock()
		used++
		cps := h.Checkpoints()
		cp := cps[len(cps)-1]
		board, err = execute(t, eng, engine.Run{ID: runID, ResumeFrom: &cp}, engine.NewBoard(), h)
	}
	return board, used, err
}

// A parked question the host declares expired — agentd's runtime resumes
// the run with engine.SignalTimeout and AskUser answers a Timeout error —
// takes the timeout route even when the engine's own clock (another
// replica's) is not there yet. A cancel of a parked run, resumed with the
// interrupt pending, runs the interrupt handler.
func TestHostDecidesParkedSignals(t *testing.T) {
	eng, _ := oneFile(t, `
nodes:
  - {id: start, wait: true, timeout: 1h, on_timeout: late, on_interrupt: bye, to: on_time}
  - {id: late, content: too late}
  - {id: bye, content: goodbye}
  - {id: on_time, content: on time}`)
	if c := engine.CapabilitiesOf(eng); !c.HandlesParkedInterrupts || !c.PromptDeadlines {
		t.Fatalf("capabilities %+v: want parked interrupts and prompt deadlines", c)
	}
	h := newParkingHost()
	if _, err := execute(t, eng, engine.Run{ID: "r"}, userBoard("go"), h); !errors.Is(err, errParked) {
		t.Fatalf("err = %v, want parked", err)
	}
	if d := h.Prompts()[0].Metadata[engine.PromptDeadlineKey]; d == "" {
		t.Fatalf("prompt metadata lacks the deadline: %v", h.Prompts()[0].Metadata)
	}
	cps := h.Checkpoints()
	parkedAt := cps[len(cps)-1]

	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{}, errdefs.Timeoutf("the prompt expired")
	}
	out, err := execute(t, eng, engine.Run{ID: "r", ResumeFrom: &parkedAt}, engine.NewBoard(), h)
	if err != nil || strings.Join(said(out), "|") != "too late" {
		t.Errorf("timeout: err %v, said %q, want too late", err, said(out))
	}

	h.AskUserFn = nil
	h.Fire(engine.Interrupt{Cause: engine.CauseUserCancel})
	out, err = execute(t, eng, engine.Run{ID: "r", ResumeFrom: &parkedAt}, engine.NewBoard(), h)
	if err != nil || strings.Join(said(out), "|") != "goodbye" {
		t.Errorf("cancel: err %v, said %q, want goodbye", err, said(out))
	}
}
