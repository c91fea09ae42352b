package graph

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// behaviour is what a test agent does with a step's prompt: it returns
// the step's content, or an error. It may also return tool calls.
type behaviour func(ctx context.Context, c call) (string, error)

// call is one execution of a test agent.
type call struct {
	Agent  string
	Model  string
	RunID  string
	Step   string
	Prompt string
	host   engine.Host
}

// fakeAgents runs every workflow agent as a test engine whose behaviour
// is looked up by agent name ("" for the default agent); agents without
// one answer "<agent> did <first line of the prompt>". It records every
// call and the highest number of calls running at once.
type fakeAgents struct {
	mu        sync.Mutex
	behaviour map[string]behaviour
	calls     []call
	running   int
	peak      int
}

func newFakeAgents(b map[string]behaviour) *fakeAgents {
	if b == nil {
		b = map[string]behaviour{}
	}
	return &fakeAgents{behaviour: b}
}

func (f *fakeAgents) Engine(spec AgentSpec) (engine.Engine, error) {
	if spec.Model == "unresolvable" {
		return nil, errdefs.NotFoundf("no provider for model %q", spec.Model)
	}
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (*engine.Board, error) {
		c := call{Agent: spec.Name, Model: spec.Model, RunID: run.ID, Step: run.Attributes[AttrStep],
			Prompt: lastUserText(board.Channel(engine.MainChannel)), host: host}
		f.mu.Lock()
		f.calls = append(f.calls, c)
		f.running++
		f.peak = max(f.peak, f.running)
		b := f.behaviour[spec.Name]
		f.mu.Unlock()
		defer func() {
			f.mu.Lock()
			f.running--
			f.mu.Unlock()
		}()
		if b == nil {
			b = func(_ context.Context, c call) (string, error) {
				first, _, _ := strings.Cut(c.Prompt, "\n")
				return fmt.Sprintf("%s did %s", nonEmpty(c.Agent, "default"), first), nil
			}
		}
		text, err := b(ctx, c)
		if err != nil {
			return board, err
		}
		if name, args, ok := strings.Cut(text, "CALL "); ok && name == "" {
			tool, arguments, _ := strings.Cut(args, " ")
			board.AppendChannelMessage(engine.MainChannel, model.Message{Role: model.RoleAssistant,
				Parts: []model.Part{model.ToolCallPart(model.ToolCall{ID: "c1", Name: tool, Arguments: json.RawMessage(arguments)})}})
			return board, nil
		}
		board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return board, nil
	}), nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// stepsCalled lists the steps the agents ran, in call order.
func (f *fakeAgents) stepsCalled() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for _, c := range f.calls {
		out = append(out, c.Step)
	}
	return out
}

func (f *fakeAgents) callOf(step string) (call, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.calls {
		if c.Step == step {
			return c, true
		}
	}
	return call{}, false
}

// block waits for an interrupt or the end of ctx.
func block(ctx context.Context, c call) (string, error) {
	select {
	case intr := <-c.host.Interrupts():
		return "", engine.Interrupted(intr)
	case <-ctx.Done():
		return "", ctx.Err()
	}
}

func fail(context.Context, call) (string, error) { return "", fmt.Errorf("agent broke") }

// mustParse parses an inline workflow.
func mustParse(t testing.TB, doc string) *Workflow {
	t.Helper()
	w, err := ParseIn([]byte(doc), "")
	if err != nil {
		t.Fatalf("workflow:\n%v", err)
	}
	return w
}

func newTestEngine(t testing.TB, doc string, agents *fakeAgents) *Engine {
	t.Helper()
	e, err := New(Config{Workflow: mustParse(t, doc), Agents: agents, AgentID: "wf", RetryBackoff: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// execute runs e on a board holding request and returns the host that
// recorded it.
func execute(t testing.TB, e *Engine, request string) (*enginetest.RecordingHost, *engine.Board, error) {
	t.Helper()
	h := enginetest.NewRecordingHost()
	board := engine.NewBoard()
	board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, request))
	out, err := e.Execute(t.Context(), engine.Run{ID: "run-1"}, h, board)
	return h, out, err
}

// stateOf decodes the last checkpoint's results.
func stateOf(t testing.TB, h *enginetest.RecordingHost) *state {
	t.Helper()
	cps := h.Checkpoints()
	if len(cps) == 0 {
		t.Fatal("no checkpoint")
	}
	st, err := decodeState(cps[len(cps)-1].Payload)
	if err != nil {
		t.Fatal(err)
	}
	return st
}

func answerOf(b *engine.Board) string {
	msgs := b.Channel(engine.MainChannel)
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != model.RoleAssistant {
		return ""
	}
	return msgs[len(msgs)-1].Text()
}
