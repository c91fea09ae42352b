package agent_test

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

func TestRunWiringSequence(t *testing.T) {
	cases := []struct {
		name      string
		engineErr error
		want      []string
	}{
		{"completed", nil, []string{"seed", "a:start", "b:start", "execute", "decide:1", "a:end:completed", "b:end:completed"}},
		{"interrupted", engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserInput}), []string{
			"seed", "a:start", "b:start", "execute", "a:interrupt:user_input", "b:interrupt:user_input",
			"decide:1", "a:end:interrupted", "b:end:interrupted"}},
		{"failed", errors.New("boom"), []string{"seed", "a:start", "b:start", "execute", "decide:1", "a:end:failed", "b:end:failed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			ag := supportAgent()
			ag.Observers = []agent.Observer{traceObserver{tr, "a:"}, traceObserver{tr, "b:"}}
			ag.Deciders = []agent.Decider{decision{tr: tr}}
			res, err := agent.Run(context.Background(), ag, replyEngine(tr, "hi", tc.engineErr), userRequest("hello"),
				agent.WithBoardSeed(traceSeeder(tr)))
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			if got := tr.list(); !slices.Equal(got, tc.want) {
				t.Fatalf("sequence:\n got %q\nwant %q", got, tc.want)
			}
			if res.Attempts != 1 {
				t.Errorf("Attempts = %d, want 1", res.Attempts)
			}
		})
	}
}

func TestRunClassifiesOutcomes(t *testing.T) {
	canceledCtx := func() context.Context {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		return ctx
	}
	cases := []struct {
		name          string
		ctx           func() context.Context
		engineErr     error
		panics        bool
		wantStatus    agent.Status
		wantCause     engine.Cause
		wantInterrupt bool
		wantClass     errdefs.Class
	}{
		{name: "completed", wantStatus: agent.StatusCompleted},
		{name: "interrupt", engineErr: engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserCancel, Detail: "stop"}),
			wantStatus: agent.StatusInterrupted, wantCause: engine.CauseUserCancel, wantInterrupt: true, wantClass: errdefs.ClassInterrupted},
		{name: "wrapped interrupt", engineErr: fmt.Errorf("step 3: %w", engine.Interrupted(engine.Interrupt{Cause: engine.CauseHostShutdown})),
			wantStatus: agent.StatusInterrupted, wantCause: engine.CauseHostShutdown, wantInterrupt: true, wantClass: errdefs.ClassInterrupted},
		{name: "pointer interrupt", engineErr: &engine.InterruptedError{Interrupt: engine.Interrupt{Cause: engine.CauseUserInput}},
			wantStatus: agent.StatusInterrupted, wantCause: engine.CauseUserInput, wantInterrupt: true, wantClass: errdefs.ClassInterrupted},
		{name: "foreign interrupted class", engineErr: errdefs.Interruptedf("peer stopped"),
			wantStatus: agent.StatusInterrupted, wantClass: errdefs.ClassInterrupted},
		{name: "context canceled", ctx: canceledCtx, engineErr: fmt.Errorf("model: %w", context.Canceled),
			wantStatus: agent.StatusCanceled, wantClass: errdefs.ClassAborted},
		{name: "other error after cancel", ctx: canceledCtx, engineErr: errdefs.Internalf("stream closed"),
			wantStatus: agent.StatusCanceled, wantClass: errdefs.ClassInternal},
		{name: "deadline", engineErr: context.DeadlineExceeded, wantStatus: agent.StatusFailed, wantClass: errdefs.ClassTimeout},
		{name: "aborted", engineErr: errdefs.Abortedf("halt"), wantStatus: agent.StatusAborted, wantClass: errdefs.ClassAborted},
		{name: "budget", engineErr: errdefs.BudgetExceededf("spent"), wantStatus: agent.StatusFailed, wantClass: errdefs.ClassBudgetExceeded},
		{name: "unclassified", engineErr: errors.New("boom"), wantStatus: agent.StatusFailed, wantClass: errdefs.ClassInternal},
		{name: "engine panic", panics: true, wantStatus: agent.StatusFailed, wantClass: errdefs.ClassInternal},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			if tc.ctx != nil {
				ctx = tc.ctx()
			}
			eng := replyEngine(nil, "partial", tc.engineErr)
			if tc.panics {
				eng = engine.EngineFunc(func(context.Context, engine.Run, engine.Host, *engine.Board) (*engine.Board, error) {
					panic("nil map")
				})
			}
			tr := &trace{}
			res, err := agent.Run(ctx, hooked(supportAgent(), []agent.Observer{traceObserver{tr, ""}}), eng, userRequest("hello"))
			if err != nil {
				t.Fatalf("Run returned an error for a business outcome: %v", err)
			}
			if res.Status != tc.wantStatus || res.Cause != tc.wantCause {
				t.Errorf("status, cause = %q, %q; want %q, %q", res.Status, res.Cause, tc.wantStatus, tc.wantCause)
			}
			if got := errdefs.ClassOf(res.Err); got != tc.wantClass {
				t.Errorf("ClassOf(res.Err) = %q, want %q (err %v)", got, tc.wantClass, res.Err)
			}
			if tc.engineErr != nil && !errors.Is(res.Err, tc.engineErr) {
				t.Errorf("res.Err = %v, want the engine's error", res.Err)
			}
			if want := tc.wantStatus == agent.StatusCompleted; res.Committed != want {
				t.Errorf("Committed = %v, want %v by default", res.Committed, want)
			}
			if got := slices.ContainsFunc(tr.list(), func(s string) bool { return strings.HasPrefix(s, "interrupt") }); got != tc.wantInterrupt {
				t.Errorf("OnInterrupt fired = %v, want %v (trace %q)", got, tc.wantInterrupt, tr.list())
			}
			if res.State == nil {
				t.Error("State is nil")
			}
		})
	}
}

func TestRunInterruptDetail(t *testing.T) {
	eng := replyEngine(nil, "x", engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "quota"}))
	res, err := agent.Run(context.Background(), supportAgent(), eng, userRequest("hi"))
	if err != nil {
		t.Fatal(err)
	}
	if res.Cause != engine.CauseCustom || res.CauseDetail != "quota" {
		t.Fatalf("cause = %q/%q, want custom/quota", res.Cause, res.CauseDetail)
	}
}

func TestRunObserverPanicsAreRecovered(t *testing.T) {
	tr := &trace{}
	ag := supportAgent()
	ag.Observers = []agent.Observer{panicObserver{}, nil, traceObserver{tr, ""}}
	res, err := agent.Run(context.Background(), ag,
		replyEngine(nil, "x", engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserInput})), userRequest("hi"))
	if err != nil || res.Status != agent.StatusInterrupted {
		t.Fatalf("Run = %v, %v; want an interrupted result and no error", res, err)
	}
	if want := []string{"start", "interrupt:user_input", "end:interrupted"}; !slices.Equal(tr.list(), want) {
		t.Errorf("observer after the panicking one saw %q, want %q", tr.list(), want)
	}
}

type panicObserver struct{}

func (panicObserver) OnRunStart(context.Context, agent.RunInfo, *agent.Request) { panic("start") }
func (panicObserver) OnInterrupt(context.Context, agent.RunInfo, engine.Interrupt) {
	panic("interrupt")
}
func (panicObserver) OnRunRevise(context.Context, agent.RunInfo, *agent.Result, int) { panic("revise") }
func (panicObserver) OnRunEnd(context.Context, agent.RunInfo, *agent.Result)         { panic("end") }

func TestRunInfrastructureErrors(t *testing.T) {
	seedErr := errdefs.NotFoundf("transcript ctx-1")
	ok := replyEngine(nil, "x", nil)
	cases := []struct {
		name      string
		ag        agent.Agent
		eng       engine.Engine
		req       agent.Request
		opts      []agent.RunOption
		wantClass errdefs.Class
		wantIs    error
	}{
		{name: "empty agent id", eng: ok, wantClass: errdefs.ClassValidation},
		{name: "nil engine", ag: supportAgent(), wantClass: errdefs.ClassValidation},
		{name: "seeder error", ag: supportAgent(), eng: ok, wantClass: errdefs.ClassNotFound, wantIs: seedErr,
			opts: []agent.RunOption{agent.WithBoardSeed(agent.BoardSeederFunc(
				func(context.Context, agent.RunInfo, *agent.Request) (*engine.Board, error) { return nil, seedErr }))}},
		{name: "seeder nil board", ag: supportAgent(), eng: ok, wantClass: errdefs.ClassInternal,
			opts: []agent.RunOption{agent.WithBoardSeed(agent.BoardSeederFunc(
				func(context.Context, agent.RunInfo, *agent.Request) (*engine.Board, error) { return nil, nil }))}},
		{name: "reserved input key", ag: supportAgent(), eng: ok, wantClass: errdefs.ClassValidation,
			req: agent.Request{Inputs: map[string]any{"__main_channel": 1}}},
		{name: "resume of another run", ag: supportAgent(), eng: ok, wantClass: errdefs.ClassValidation,
			req:  agent.Request{RunID: "run-2"},
			opts: []agent.RunOption{agent.WithResumeFrom(&engine.Checkpoint{ExecID: "run-1", Board: &engine.BoardSnapshot{}})}},
		{name: "resume without board", ag: supportAgent(), eng: ok, wantClass: errdefs.ClassValidation,
			opts: []agent.RunOption{agent.WithResumeFrom(&engine.Checkpoint{ExecID: "run-1"})}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			res, err := agent.Run(context.Background(), hooked(tc.ag, []agent.Observer{traceObserver{tr, ""}}), tc.eng, tc.req, tc.opts...)
			if res != nil || err == nil {
				t.Fatalf("Run = %v, %v; want nil and an error", res, err)
			}
			if got := errdefs.ClassOf(err); got != tc.wantClass {
				t.Errorf("class = %q, want %q (%v)", got, tc.wantClass, err)
			}
			if tc.wantIs != nil && !errors.Is(err, tc.wantIs) {
				t.Errorf("err = %v, want it to wrap %v", err, tc.wantIs)
			}
			if steps := tr.list(); len(steps) != 0 {
				t.Errorf("observers fired on an infrastructure failure: %q", steps)
			}
		})
	}
}

func TestRunEngineInputs(t *testing.T) {
	deps := &engine.Dependencies{}
	host := &enginetest.HostFuncs{}
	var got engine.Run
	var gotHost engine.Host
	eng := engine.EngineFunc(func(_ context.Context, run engine.Run, h engine.Host, b *engine.Board) (*engine.Board, error) {
		got, gotHost = run, h
		return b, nil
	})
	req := userRequest("hi")
	req.RunID = "run-7"
	res, err := agent.Run(context.Background(), supportAgent(), eng, req,
		agent.WithDependencies(deps), agent.WithEngineHost(host),
		agent.WithAttributes(map[string]string{"tenant": "acme"}),
		agent.WithAttributes(map[string]string{"tenant": "globex", agent.AttrContextID: "override"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != "run-7" || res.RunID != "run-7" || got.ParentRunID != "" || got.Deps != deps || got.ResumeFrom != nil {
		t.Errorf("engine.Run = %+v", got)
	}
	if gotHost != engine.Host(host) {
		t.Errorf("engine got host %T, want the one passed, unwrapped", gotHost)
	}
	want := map[string]string{
		agent.AttrAgentID: "support", agent.AttrRunID: "run-7", agent.AttrTaskID: "task-1",
		agent.AttrContextID: "override", "tenant": "globex",
	}
	if fmt.Sprint(got.Attributes) != fmt.Sprint(want) {
		t.Errorf("Attributes = %v, want %v", got.Attributes, want)
	}
	info := agent.RunInfoFromAttributes(got.ID, got.Attributes)
	if info != (agent.RunInfo{AgentID: "support", RunID: "run-7", TaskID: "task-1", ContextID: "override"}) {
		t.Errorf("RunInfoFromAttributes = %+v", info)
	}
}

func TestRunMintsTimeOrderedRunIDs(t *testing.T) {
	var ids []string
	for range 3 {
		res, err := agent.Run(context.Background(), supportAgent(), replyEngine(nil, "x", nil), agent.Request{})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, res.RunID)
	}
	uuidV7 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	for _, id := range ids {
		if !uuidV7.MatchString(id) {
			t.Errorf("run id %q is not a UUIDv7", id)
		}
	}
	if ids[0] == ids[1] || ids[1] == ids[2] {
		t.Errorf("run ids %q are not distinct", ids)
	}
}

func TestRunAttributesOmitMissingIdentifiers(t *testing.T) {
	var attrs map[string]string
	eng := engine.EngineFunc(func(_ context.Context, run engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		attrs = run.Attributes
		return b, nil
	})
	if _, err := agent.Run(context.Background(), supportAgent(), eng, agent.Request{Message: model.NewText("", "hi")}); err != nil {
		t.Fatal(err)
	}
	if _, ok := attrs[agent.AttrTaskID]; ok {
		t.Errorf("attributes %v carry an empty task id", attrs)
	}
	if attrs[agent.AttrRunID] == "" || attrs[agent.AttrAgentID] != "support" {
		t.Errorf("attributes %v lack run or agent id", attrs)
	}
}
