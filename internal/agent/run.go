package agent

import (
	"context"
	"fmt"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Run executes one turn of ag on eng and classifies the outcome.
//
// Per attempt it: seeds the board (WithBoardSeed, else DefaultSeeder; a
// resumed first attempt restores the checkpoint's board instead), fires
// OnRunStart, calls eng.Execute with engine.Run{ID,
// Attributes (the Attr* identifiers plus WithAttributes), Deps,
// ResumeFrom (first attempt only)} and the host (WithEngineHost, else
// engine.NoopHost), fires OnInterrupt for an engine.InterruptedError,
// assembles the Result (Status, Messages, LastBoard) and runs
// the Decider chain, whose merged decision sets Committed and State and
// may ask for another attempt (WithMaxRevise). OnRunEnd fires once, last.
//
// Run returns (res, nil) for every business outcome, including engine
// failures, which Status and Result.Err describe. It returns (nil, err)
// for infrastructure failures — a nil engine or empty Agent.ID
// (Validation), an invalid WithResumeFrom checkpoint (Validation), a
// seeder error or nil board — and (res, err) when a Decider fails, or when
// re-seeding a revise attempt fails (res is then the last completed
// attempt). Observers never cause an error.
func Run(ctx context.Context, ag Agent, eng engine.Engine, req Request, opts ...RunOption) (*Result, error) {
	if ag.ID == "" {
		return nil, errdefs.Validationf("run agent: agent id is empty")
	}
	if eng == nil {
		return nil, errdefs.Validationf("run agent %q: engine is nil", ag.ID)
	}
	// One allocation holds the options, the request and the first
	// attempt's Result, which all escape (to the options, to observers,
	// to the caller).
	r := &runner{eng: eng, cfg: runConfig{seeder: DefaultSeeder{}}, reqValue: req}
	cfg := &r.cfg
	for _, opt := range opts {
		if opt != nil {
			opt(cfg)
		}
	}
	if cfg.host == nil {
		cfg.host = engine.NoopHost{}
	}
	r.req = &r.reqValue
	r.obs = observers{list: nonNil(ag.Observers)}
	r.deciders = nonNil(ag.Deciders)
	runID, err := resolveRunID(ag.ID, req.RunID, cfg.resumeFrom)
	if err != nil {
		return nil, err
	}
	r.info = RunInfo{AgentID: ag.ID, RunID: runID, TaskID: req.TaskID, ContextID: req.ContextID}
	return r.run(ctx)
}

// resolveRunID applies "a resume runs under the checkpoint's id, a
// request's id wins over a minted one" and rejects resumes that cannot
// belong to the request.
func resolveRunID(agentID, reqRunID string, cp *engine.Checkpoint) (string, error) {
	if cp == nil {
		if reqRunID != "" {
			return reqRunID, nil
		}
		return model.NewID(), nil
	}
	if reqRunID != "" && reqRunID != cp.ExecID {
		return "", errdefs.Validationf("run agent %q: request run id %q does not match checkpoint run id %q", agentID, reqRunID, cp.ExecID)
	}
	if err := engine.ValidateResume(engine.Run{ID: cp.ExecID, ResumeFrom: cp}); err != nil {
		return "", fmt.Errorf("run agent %q: %w", agentID, err)
	}
	return cp.ExecID, nil
}

// runner carries one Run call through its attempts.
type runner struct {
	eng      engine.Engine
	cfg      runConfig
	req      *Request // &reqValue
	reqValue Request
	info     RunInfo
	obs      observers
	deciders []Decider
	// first is the Result of attempt 1, allocated with the runner.
	first Result
}

func (r *runner) run(ctx context.Context) (*Result, error) {
	var prev *Result
	for attempt := 1; ; attempt++ {
		board, err := r.startBoard(ctx, attempt, prev)
		if err != nil {
			if prev == nil {
				return nil, err
			}
			r.obs.runEnd(ctx, r.info, prev)
			return prev, err
		}
		r.obs.runStart(ctx, r.info, r.req)
		res := r.attempt(ctx, attempt, board)

		dec, err := decide(ctx, r.deciders, r.info, r.req, res)
		if err != nil {
			res.Committed = false
			r.obs.runEnd(ctx, r.info, res)
			return res, err
		}
		dec.apply(res)
		if !dec.Revise || res.Status != StatusCompleted || attempt >= r.cfg.maxAttempts {
			r.obs.runEnd(ctx, r.info, res)
			return res, nil
		}
		r.obs.runRevise(ctx, r.info, res, attempt+1)
		prev = res
	}
}

// startBoard returns the board attempt starts from: the checkpoint's when
// the first attempt resumes, a freshly seeded one otherwise — by the
// seeder's SeedRevision, when it has one, for a revise of prev.
func (r *runner) startBoard(ctx context.Context, attempt int, prev *Result) (*engine.Board, error) {
	if r.resumeFrom(attempt) != nil {
		return engine.RestoreBoard(r.cfg.resumeFrom.Board), nil
	}
	var b *engine.Board
	var err error
	if rs, ok := r.cfg.seeder.(RevisionSeeder); ok && prev != nil {
		b, err = rs.SeedRevision(ctx, r.info, r.req, prev)
	} else {
		b, err = r.cfg.seeder.SeedBoard(ctx, r.info, r.req)
	}
	if err != nil {
		return nil, fmt.Errorf("run agent %q run %q: seed board for attempt %d: %w", r.info.AgentID, r.info.RunID, attempt, err)
	}
	if b == nil {
		return nil, errdefs.Internalf("run agent %q run %q: seeder %T returned a nil board for attempt %d", r.info.AgentID, r.info.RunID, r.cfg.seeder, attempt)
	}
	return b, nil
}

func (r *runner) resumeFrom(attempt int) *engine.Checkpoint {
	if attempt == 1 {
		return r.cfg.resumeFrom
	}
	return nil
}

// attempt executes once and returns the classified, not yet decided,
// Result.
func (r *runner) attempt(ctx context.Context, attempt int, board *engine.Board) *Result {
	start := board.ChannelLen(engine.MainChannel)
	// Attributes are built afresh per attempt so an engine that breaks the
	// never-mutate rule cannot leak into the next attempt.
	run := engine.Run{
		ID:         r.info.RunID,
		Attributes: r.info.attributes(r.cfg.attributes),
		Deps:       r.cfg.deps,
		ResumeFrom: r.resumeFrom(attempt),
	}
	out, err := execute(ctx, r.eng, run, r.cfg.host, board)
	if out == nil {
		out = board
	}
	res := &r.first
	if attempt > 1 {
		res = new(Result)
	}
	*res = Result{
		TaskID:    r.req.TaskID,
		ContextID: r.req.ContextID,
		RunID:     r.info.RunID,
		State:     make(map[string]any),
		LastBoard: out,
		Attempts:  attempt,
		Messages:  producedMessages(out, start),
	}
	if err != nil {
		res.Err = err
		res.Status = classify(ctx, err)
		if intr, ok := asInterrupt(err); ok && res.Status == StatusInterrupted {
			res.Cause, res.CauseDetail = intr.Cause, intr.Detail
			r.obs.interrupt(ctx, r.info, intr)
		}
	} else {
		res.Status = StatusCompleted
	}
	return res
}

// execute turns an engine panic into a failed turn: a server hosting many
// agents must not go down with one broken engine.
func execute(ctx context.Context, eng engine.Engine, run engine.Run, host engine.Host, board *engine.Board) (out *engine.Board, err error) {
	defer func() {
		if v := recover(); v != nil {
			out, err = nil, errdefs.Internalf("run %q: engine %T panicked: %v", run.ID, eng, v)
		}
	}()
	return eng.Execute(ctx, run, host, board)
}

// nonNil is list without its nil entries (a nil observer or decider is
// ignored).
func nonNil[T comparable](list []T) []T {
	var zero T
	var out []T
	for _, v := range list {
		if v != zero {
			out = append(out, v)
		}
	}
	return out
}
