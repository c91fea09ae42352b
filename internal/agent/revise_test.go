package agent_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// reviseUntil asks for a revision on every completed attempt below n.
type reviseUntil struct{ n int }

func (d reviseUntil) BeforeFinalize(_ context.Context, _ agent.RunInfo, _ *agent.Request, res *agent.Result) (agent.FinalizeDecision, error) {
	if res.Attempts < d.n {
		return agent.FinalizeDecision{Revise: true, Reason: "no citations"}, nil
	}
	return agent.FinalizeDecision{}, nil
}

// attemptEngine records what each attempt started from and fails the
// attempts listed in failOn.
type attemptEngine struct {
	tr       *trace
	failOn   []int
	attempt  int
	starts   []int // main-channel length at start, per attempt
	resumes  []bool
	runIDs   []string
	boardIDs []*engine.Board
}

func (e *attemptEngine) Execute(_ context.Context, run engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
	e.attempt++
	e.tr.add("execute")
	e.starts = append(e.starts, len(b.Channel(engine.MainChannel)))
	e.resumes = append(e.resumes, run.ResumeFrom != nil)
	e.runIDs = append(e.runIDs, run.ID)
	e.boardIDs = append(e.boardIDs, b)
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "draft"))
	if slices.Contains(e.failOn, e.attempt) {
		return b, errors.New("model failed")
	}
	return b, nil
}

func TestReviseLoop(t *testing.T) {
	cases := []struct {
		name         string
		maxRevise    int
		reviseBelow  int
		failOn       []int
		wantAttempts int
		wantStatus   agent.Status
		wantTrace    []string
	}{
		{name: "disabled by default", reviseBelow: 5, wantAttempts: 1, wantStatus: agent.StatusCompleted,
			wantTrace: []string{"seed", "start", "execute", "end:completed"}},
		{name: "max 1 is disabled", maxRevise: 1, reviseBelow: 5, wantAttempts: 1, wantStatus: agent.StatusCompleted,
			wantTrace: []string{"seed", "start", "execute", "end:completed"}},
		{name: "stops at the cap", maxRevise: 3, reviseBelow: 10, wantAttempts: 3, wantStatus: agent.StatusCompleted,
			wantTrace: []string{"seed", "start", "execute", "revise:1->2", "seed", "start", "execute",
				"revise:2->3", "seed", "start", "execute", "end:completed"}},
		{name: "stops when satisfied", maxRevise: 5, reviseBelow: 2, wantAttempts: 2, wantStatus: agent.StatusCompleted,
			wantTrace: []string{"seed", "start", "execute", "revise:1->2", "seed", "start", "execute", "end:completed"}},
		{name: "failed attempt never revises", maxRevise: 5, reviseBelow: 10, failOn: []int{1}, wantAttempts: 1,
			wantStatus: agent.StatusFailed, wantTrace: []string{"seed", "start", "execute", "end:failed"}},
		{name: "failure on a revise attempt is final", maxRevise: 5, reviseBelow: 10, failOn: []int{2}, wantAttempts: 2,
			wantStatus: agent.StatusFailed, wantTrace: []string{"seed", "start", "execute", "revise:1->2", "seed", "start",
				"execute", "end:failed"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tr := &trace{}
			eng := &attemptEngine{tr: tr, failOn: tc.failOn}
			ag := hooked(supportAgent(), []agent.Observer{traceObserver{tr, ""}}, reviseUntil{tc.reviseBelow})
			res, err := agent.Run(context.Background(), ag, eng, userRequest("hi"),
				agent.WithBoardSeed(traceSeeder(tr)), agent.WithMaxRevise(tc.maxRevise))
			if err != nil {
				t.Fatal(err)
			}
			if res.Attempts != tc.wantAttempts || res.Status != tc.wantStatus {
				t.Errorf("attempts, status = %d, %q; want %d, %q", res.Attempts, res.Status, tc.wantAttempts, tc.wantStatus)
			}
			if got := tr.list(); !slices.Equal(got, tc.wantTrace) {
				t.Errorf("trace:\n got %q\nwant %q", got, tc.wantTrace)
			}
			// Every attempt starts from a fresh board holding only the request,
			// and reports only its own output.
			for i, n := range eng.starts {
				if n != 1 {
					t.Errorf("attempt %d started with %d main messages, want 1", i+1, n)
				}
			}
			if len(slices.Compact(slices.Clone(eng.boardIDs))) != len(eng.boardIDs) {
				t.Error("a revise attempt reused the previous board")
			}
			if got := texts(res.Messages); !slices.Equal(got, []string{"draft"}) {
				t.Errorf("Messages = %q, want only the last attempt's output", got)
			}
			if len(slices.Compact(slices.Clone(eng.runIDs))) != 1 {
				t.Errorf("run ids across attempts = %q, want one", eng.runIDs)
			}
		})
	}
}

func TestReviseResumesOnlyTheFirstAttempt(t *testing.T) {
	tr := &trace{}
	eng := &attemptEngine{tr: tr}
	cp := &engine.Checkpoint{ExecID: "run-9", Step: "s2", Board: &engine.BoardSnapshot{Channels: map[string][]model.Message{
		engine.MainChannel: {model.NewText(model.RoleUser, "q"), model.NewText(model.RoleAssistant, "earlier")},
	}}}
	ag := hooked(supportAgent(), []agent.Observer{traceObserver{tr, ""}}, reviseUntil{2})
	res, err := agent.Run(context.Background(), ag, eng, userRequest("hi"),
		agent.WithBoardSeed(traceSeeder(tr)), agent.WithResumeFrom(cp), agent.WithMaxRevise(2))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(eng.resumes, []bool{true, false}) {
		t.Errorf("ResumeFrom set per attempt = %v, want [true false]", eng.resumes)
	}
	if !slices.Equal(eng.starts, []int{2, 1}) {
		t.Errorf("start boards = %v, want the checkpoint's (2) then a seeded one (1)", eng.starts)
	}
	want := []string{"start", "execute", "revise:1->2", "seed", "start", "execute", "end:completed"}
	if got := tr.list(); !slices.Equal(got, want) {
		t.Errorf("trace = %q, want %q", got, want)
	}
	if res.RunID != "run-9" || !slices.Equal(eng.runIDs, []string{"run-9", "run-9"}) {
		t.Errorf("run ids = %q (result %q), want the checkpoint's", eng.runIDs, res.RunID)
	}
}

func TestReviseReseedFailureEndsWithPreviousResult(t *testing.T) {
	tr := &trace{}
	seedErr := errors.New("history store down")
	calls := 0
	seeder := agent.BoardSeederFunc(func(ctx context.Context, info agent.RunInfo, req *agent.Request) (*engine.Board, error) {
		calls++
		if calls > 1 {
			return nil, seedErr
		}
		return agent.DefaultSeeder{}.SeedBoard(ctx, info, req)
	})
	ag := hooked(supportAgent(), []agent.Observer{traceObserver{tr, ""}}, reviseUntil{5})
	res, err := agent.Run(context.Background(), ag, &attemptEngine{tr: tr}, userRequest("hi"),
		agent.WithBoardSeed(seeder), agent.WithMaxRevise(3))
	if !errors.Is(err, seedErr) {
		t.Fatalf("err = %v, want the seeder's", err)
	}
	if res == nil || res.Attempts != 1 || res.Status != agent.StatusCompleted {
		t.Fatalf("res = %+v, want the first attempt's result", res)
	}
	want := []string{"start", "execute", "revise:1->2", "end:completed"}
	if got := tr.list(); !slices.Equal(got, want) {
		t.Errorf("trace = %q, want %q", got, want)
	}
}

// feedbackDecider asks for one revision, leaving feedback in State.
type feedbackDecider struct{}

func (feedbackDecider) BeforeFinalize(_ context.Context, _ agent.RunInfo, _ *agent.Request, res *agent.Result) (agent.FinalizeDecision, error) {
	if res.Attempts == 1 {
		return agent.FinalizeDecision{Revise: true, Reason: "judge", State: map[string]any{agent.ReviseFeedbackStateKey: "cite a source"}}, nil
	}
	return agent.FinalizeDecision{}, nil
}

// revisionSeeder seeds revise attempts with the previous answer and the
// feedback it was revised for.
type revisionSeeder struct {
	agent.DefaultSeeder
	seen []string
}

func (s *revisionSeeder) SeedRevision(ctx context.Context, info agent.RunInfo, req *agent.Request, prev *agent.Result) (*engine.Board, error) {
	b, err := s.SeedBoard(ctx, info, req)
	if err != nil {
		return nil, err
	}
	fb, _ := prev.State[agent.ReviseFeedbackStateKey].(string)
	s.seen = append(s.seen, fb)
	for _, m := range prev.Messages {
		b.AppendChannelMessage(engine.MainChannel, m)
	}
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, fb))
	return b, nil
}

// A RevisionSeeder seeds the revise attempt from the attempt it revises
// and the decision's feedback; the first attempt is seeded as usual.
func TestRevisionSeederSeesThePreviousDecision(t *testing.T) {
	eng := &attemptEngine{tr: &trace{}}
	seeder := &revisionSeeder{}
	res, err := agent.Run(context.Background(), agent.Agent{ID: "a", Deciders: []agent.Decider{feedbackDecider{}}}, eng,
		agent.Request{Message: model.NewText(model.RoleUser, "q")}, agent.WithMaxRevise(3), agent.WithBoardSeed(seeder))
	if err != nil || res.Attempts != 2 || res.Status != agent.StatusCompleted {
		t.Fatalf("Run: %+v, %v; want 2 attempts, completed", res, err)
	}
	if !slices.Equal(seeder.seen, []string{"cite a source"}) {
		t.Fatalf("SeedRevision saw feedback %q, want once \"cite a source\"", seeder.seen)
	}
	// The question, the first draft, the feedback: the second attempt
	// starts where the first ended, told what to change.
	if !slices.Equal(eng.starts, []int{1, 3}) {
		t.Fatalf("attempts started on %v messages, want [1 3]", eng.starts)
	}
}
