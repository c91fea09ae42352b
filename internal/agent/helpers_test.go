package agent_test

import (
	"context"
	"fmt"
	"sync"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// trace records lifecycle steps from seeder, observers, engine and
// deciders in one ordered list.
type trace struct {
	mu    sync.Mutex
	steps []string
}

func (tr *trace) add(format string, args ...any) {
	tr.mu.Lock()
	tr.steps = append(tr.steps, fmt.Sprintf(format, args...))
	tr.mu.Unlock()
}

func (tr *trace) list() []string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return append([]string(nil), tr.steps...)
}

// traceObserver writes every hook to a trace.
type traceObserver struct {
	tr   *trace
	name string
}

func (o traceObserver) OnRunStart(context.Context, agent.RunInfo, *agent.Request) {
	o.tr.add("%sstart", o.name)
}

func (o traceObserver) OnInterrupt(_ context.Context, _ agent.RunInfo, intr engine.Interrupt) {
	o.tr.add("%sinterrupt:%s", o.name, intr.Cause)
}

func (o traceObserver) OnRunRevise(_ context.Context, _ agent.RunInfo, prev *agent.Result, next int) {
	o.tr.add("%srevise:%d->%d", o.name, prev.Attempts, next)
}

func (o traceObserver) OnRunEnd(_ context.Context, _ agent.RunInfo, res *agent.Result) {
	o.tr.add("%send:%s", o.name, res.Status)
}

// traceSeeder seeds the default board and records the call.
func traceSeeder(tr *trace) agent.BoardSeeder {
	return agent.BoardSeederFunc(func(ctx context.Context, info agent.RunInfo, req *agent.Request) (*engine.Board, error) {
		tr.add("seed")
		return agent.DefaultSeeder{}.SeedBoard(ctx, info, req)
	})
}

// decision is a Decider returning a fixed answer (and recording the call).
type decision struct {
	tr  *trace
	dec agent.FinalizeDecision
	err error
}

func (d decision) BeforeFinalize(_ context.Context, _ agent.RunInfo, _ *agent.Request, res *agent.Result) (agent.FinalizeDecision, error) {
	if d.tr != nil {
		d.tr.add("decide:%d", res.Attempts)
	}
	return d.dec, d.err
}

// replyEngine appends one assistant message and returns err.
func replyEngine(tr *trace, text string, err error) engine.Engine {
	return engine.EngineFunc(func(_ context.Context, run engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		if tr != nil {
			tr.add("execute")
		}
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
		return b, err
	})
}

func userRequest(text string) agent.Request {
	return agent.Request{TaskID: "task-1", ContextID: "ctx-1", Message: model.NewText(model.RoleUser, text)}
}

func supportAgent() agent.Agent { return agent.Agent{ID: "support"} }

// hooked is ag with obs and decs after its own observers and deciders.
func hooked(ag agent.Agent, obs []agent.Observer, decs ...agent.Decider) agent.Agent {
	ag.Observers = append(append([]agent.Observer(nil), ag.Observers...), obs...)
	ag.Deciders = append(append([]agent.Decider(nil), ag.Deciders...), decs...)
	return ag
}

func texts(msgs []model.Message) []string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = m.Text()
	}
	return out
}
