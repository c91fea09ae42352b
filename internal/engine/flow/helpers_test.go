package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// effects records the tool calls the test tools receive, by tool and
// idempotency key.
type effects struct {
	mu    sync.Mutex
	calls []string // "tool key"
}

func (e *effects) record(ctx context.Context, name string) {
	c, _ := tool.CallFromContext(ctx)
	e.mu.Lock()
	e.calls = append(e.calls, name+" "+c.IdempotencyKey)
	e.mu.Unlock()
}

// tools returns the tool names called, in order.
func (e *effects) tools() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]string, len(e.calls))
	for i, c := range e.calls {
		out[i], _, _ = strings.Cut(c, " ")
	}
	return out
}

func (e *effects) all() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return slices.Clone(e.calls)
}

// registry holds the calculator and the test tools, which record their
// calls in eff. failing names tools that fail instead of succeeding.
func registry(t testing.TB, eff *effects, failing ...string) *tool.Registry {
	t.Helper()
	reg := &tool.Registry{}
	if err := reg.Register(tool.Calculator()); err != nil {
		t.Fatal(err)
	}
	ok := func(name string, data any) {
		t.Helper()
		fn := func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			eff.record(ctx, name)
			if slices.Contains(failing, name) {
				return tool.Result{}, errors.New(name + " service unavailable")
			}
			if data == nil {
				return tool.Text(name + " done"), nil
			}
			b, _ := json.Marshal(data)
			return tool.Result{Content: string(b), Data: b}, nil
		}
		if err := reg.Register(tool.New(tool.Spec{Name: name, Description: name}, fn)); err != nil {
			t.Fatal(err)
		}
	}
	ok("reserve_hotel", map[string]any{"id": "HTL-1", "city": "Paris", "status": "reserved"})
	ok("cancel_hotel", nil)
	ok("book_flight", map[string]any{"id": "FLT-2", "status": "confirmed"})
	ok("cancel_flight", nil)
	ok("rent_car", nil)
	ok("ping", nil)
	mustRegister(t, reg, tool.New(tool.Spec{Name: "forbidden", Description: "always denied"},
		func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			eff.record(ctx, "forbidden")
			return tool.Result{}, errdefs.Forbiddenf("policy forbids it")
		}))
	mustRegister(t, reg, tool.New(tool.Spec{Name: "block", Description: "waits for its context"},
		func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
			eff.record(ctx, "block")
			<-ctx.Done()
			return tool.Result{}, ctx.Err()
		}))
	return reg
}

func mustRegister(t testing.TB, reg *tool.Registry, tl tool.Tool) {
	t.Helper()
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
}

// compile loads testdata/name and compiles it against reg.
func compile(t testing.TB, name string, reg *tool.Registry) *flow.Flow {
	t.Helper()
	spec, err := flow.Load(os.DirFS("testdata"), name)
	if err != nil {
		t.Fatal(err)
	}
	return compileSpec(t, spec, reg)
}

func compileSpec(t testing.TB, spec *flow.Spec, reg *tool.Registry) *flow.Flow {
	t.Helper()
	f, problems := flow.Compile(spec, func(n string) bool { _, ok := reg.Get(n); return ok })
	if err := problems.Err(spec.Name); err != nil {
		t.Fatal(err)
	}
	return f
}

func newEngine(t testing.TB, f *flow.Flow, reg *tool.Registry) *flow.Engine {
	t.Helper()
	eng, err := flow.New(flow.Config{Flow: f, Tools: reg, AgentID: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	return eng
}

// replies answers prompts with the given texts in turn, then refuses.
func replies(texts ...string) func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
	var mu sync.Mutex
	return func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		mu.Lock()
		defer mu.Unlock()
		if len(texts) == 0 {
			return engine.UserReply{}, errdefs.NotAvailablef("no more replies")
		}
		r := texts[0]
		texts = texts[1:]
		return engine.UserReply{Parts: []model.Part{model.TextPart(r)}}, nil
	}
}

func userBoard(text string) *engine.Board {
	b := engine.NewBoard()
	if text != "" {
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
	}
	return b
}

func execute(t testing.TB, eng engine.Engine, run engine.Run, board *engine.Board, host engine.Host) (*engine.Board, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return eng.Execute(ctx, run, host, board)
}

// stepTrail lists the step events as "verb kind node" ("start node
// 01_hotel", "error undo 02_flight"), in order.
func stepTrail(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		var verb string
		var s engine.Step
		switch e := ev.(type) {
		case engine.StepStarted:
			verb, s = "start", e.Step
		case engine.StepCompleted:
			verb, s = "complete", e.Step
		case engine.StepFailed:
			verb, s = "error", e.Step
		default:
			continue
		}
		var d struct {
			Node string `json:"node"`
		}
		if b, err := json.Marshal(s.Detail); err == nil {
			_ = json.Unmarshal(b, &d)
		}
		out = append(out, verb+" "+s.Kind+" "+d.Node)
	}
	return out
}

// said returns the texts of the assistant messages on the main channel.
func said(b *engine.Board) []string {
	var out []string
	for _, m := range b.Channel(engine.MainChannel) {
		if m.Role == model.RoleAssistant {
			out = append(out, m.Text())
		}
	}
	return out
}

// finalContext decodes the flow-context artifact the run published.
func finalContext(t testing.TB, h *enginetest.RecordingHost) (map[string]any, []string) {
	t.Helper()
	for _, ev := range h.Events() {
		a, ok := ev.(engine.ArtifactUpdate)
		if !ok {
			continue
		}
		var p engine.ArtifactUpdate // as the log holds it: decoded JSON
		if err := roundTrip(a, &p); err != nil {
			t.Fatal(err)
		}
		var ctx map[string]any
		if err := json.Unmarshal(p.Artifact.Parts[0].Data, &ctx); err != nil {
			t.Fatal(err)
		}
		var hist []string
		for _, h := range p.Artifact.Metadata["history"].([]any) {
			hist = append(hist, h.(string))
		}
		return ctx, hist
	}
	t.Fatal("no flow-context artifact published")
	return nil, nil
}

func replyOf(text string) *engine.UserReply {
	return &engine.UserReply{Parts: []model.Part{model.TextPart(text)}}
}

// roundTrip decodes into out what v encodes to.
func roundTrip(v, out any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, out)
}
