package goal

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"

	"go.uber.org/goleak"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/graph"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// countingPlanner is the scripted model, counting its turns.
type countingPlanner struct {
	llm.Provider
	turns atomic.Int32
}

func (p *countingPlanner) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	p.turns.Add(1)
	return p.Provider.Stream(ctx, req)
}

// planner is a scripted planner that answers first with first and, told
// its workflow is not valid, with corrected.
func planner(t testing.TB, first, corrected string) *countingPlanner {
	t.Helper()
	p, err := scripted.New(scripted.Config{Rules: []scripted.Rule{
		{Name: "corrected", Prefix: "The workflow is not valid", Reply: corrected, Split: "none"},
		{Name: "first", Reply: first, Split: "none"},
	}})
	if err != nil {
		t.Fatal(err)
	}
	return &countingPlanner{Provider: p}
}

// stepAgents runs the plan's agents ("agent:<id>") as test engines that
// answer "<id> did <step>" and count their executions by step. An agent
// named "blocker" waits until its run stops.
type stepAgents struct {
	// noBlock makes "blocker" answer like the others.
	noBlock bool
	mu      sync.Mutex
	calls   map[string]int
}

func (s *stepAgents) Engine(spec graph.AgentSpec) (engine.Engine, error) {
	id := spec.Model[len("agent:"):]
	return engine.EngineFunc(func(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (*engine.Board, error) {
		step := run.Attributes[graph.AttrStep]
		s.mu.Lock()
		if s.calls == nil {
			s.calls = map[string]int{}
		}
		s.calls[step]++
		s.mu.Unlock()
		if id == "blocker" && !s.noBlock {
			_ = host.Publish(ctx, engine.StepStarted{Step: engine.Step{Actor: "blocker", Kind: "wait"}})
			select {
			case intr := <-host.Interrupts():
				_ = host.Publish(ctx, engine.StepFailed{Step: engine.Step{Actor: "blocker", Kind: "wait"}, Err: engine.Interrupted(intr)})
				return board, engine.Interrupted(intr)
			case <-ctx.Done():
				_ = host.Publish(ctx, engine.StepFailed{Step: engine.Step{Actor: "blocker", Kind: "wait"}, Err: ctx.Err()})
				return board, ctx.Err()
			}
		}
		board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, fmt.Sprintf("%s did %s", id, step)))
		return board, nil
	}), nil
}

func (s *stepAgents) count(step string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.calls[step]
}

func (s *stepAgents) total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.calls {
		n += c
	}
	return n
}

var offered = []Agent{
	{ID: "researcher", Description: "Finds facts."},
	{ID: "writer", Description: "Writes text."},
	{ID: "blocker", Description: "Waits forever."},
}

func newEngine(t testing.TB, p llm.Provider, steps graph.Agents, approval bool) *Engine {
	t.Helper()
	e, err := New(Config{Planner: p, Agents: offered, Steps: steps, Approval: approval, AgentID: "goal"})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func goalBoard(text string) *engine.Board {
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
	return b
}

// parkThenAnswer is the runtime's AskUser in two attempts: the first
// parks the run (an interrupt), the next one is handed reply.
var errParked = engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})

func parks(context.Context, engine.UserPrompt) (engine.UserReply, error) {
	return engine.UserReply{}, errParked
}

func answers(reply engine.UserReply) func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
	used := false
	return func(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
		if used {
			return parks(ctx, p)
		}
		used = true
		return reply, nil
	}
}

// approvalReply is a reply with one decision in its approvals data part.
func approvalReply(t testing.TB, a engine.ApprovalAnswer) engine.UserReply {
	t.Helper()
	part, err := model.DataPart(map[string]any{"approvals": []engine.ApprovalAnswer{a}})
	if err != nil {
		t.Fatal(err)
	}
	return engine.UserReply{Parts: []model.Part{part}}
}

// lastCheckpoint is the latest checkpoint h recorded.
func lastCheckpoint(t testing.TB, h *enginetest.RecordingHost) *engine.Checkpoint {
	t.Helper()
	cps := h.Checkpoints()
	if len(cps) == 0 {
		t.Fatal("no checkpoint")
	}
	return &cps[len(cps)-1]
}

// artifact is the last published artifact named name.
func artifact(h *enginetest.RecordingHost, id string) (model.Artifact, bool) {
	var out model.Artifact
	found := false
	for _, ev := range h.Events() {
		if a, ok := ev.(engine.ArtifactUpdate); ok && a.Artifact.ID == id {
			out, found = a.Artifact, true
		}
	}
	return out, found
}

// dataOf decodes the data part of a into v.
func dataOf(t testing.TB, a model.Artifact, v any) {
	t.Helper()
	for _, p := range a.Parts {
		if p.Type == model.PartData {
			if err := json.Unmarshal(p.Data, v); err != nil {
				t.Fatal(err)
			}
			return
		}
	}
	t.Fatalf("artifact %s has no data part", a.ID)
}

// switchPlanner answers the goal (the conversation's first user message)
// with the plan of that name, every time.
type switchPlanner struct{ plans map[string]string }

func (p *switchPlanner) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	goal := ""
	for _, m := range req.Messages {
		if m.Role == model.RoleUser {
			goal = m.Text()
			break
		}
	}
	s, err := scripted.New(scripted.Config{Rules: []scripted.Rule{{Reply: p.plans[goal], Split: "none"}}})
	if err != nil {
		return nil, err
	}
	return s.Stream(ctx, req)
}
