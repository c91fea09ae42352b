package graph

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"agentd/internal/engine"
)

// cumulativeSeparator joins iterations in outputMode cumulative (spec §6).
const cumulativeSeparator = "\n\n---\n\n"

// runInclude runs an included sub-workflow as a scope of its own, its
// step ids namespaced under the include step (`deploy.run-tests`).
func (x *execution) runInclude(ctx context.Context, sc *scope, s *Step, id string) (*StepResult, error) {
	deps, kept := x.depsContext(sc, s)
	sub := &scope{wf: s.sub, steps: s.sub.Steps, prefix: id + ".", request: sc.request,
		inherited: deps + sc.inherited, preserved: kept || sc.preserved}
	if err := x.runDAG(ctx, sub); err != nil {
		return nil, err
	}
	content, err := x.scopeOutcome(sub)
	if err != nil {
		return nil, err
	}
	return &StepResult{Content: content}, nil
}

// runLoop runs a forEach or repeat-until loop step.
func (x *execution) runLoop(ctx context.Context, sc *scope, s *Step, id string) (*StepResult, error) {
	if s.Loop.ForEach != nil {
		return x.runForEach(ctx, sc, s, id)
	}
	return x.runRepeat(ctx, sc, s, id)
}

// iteration runs one iteration of s: its inner steps as a scope under
// prefix, or — for a loop without inner steps — s itself as one agent
// step with the extra context.
func (x *execution) iteration(ctx context.Context, sc *scope, s *Step, itID, extra string, item any, index, iter int) (*StepResult, error) {
	deps, kept := x.depsContext(sc, s)
	inherited := deps + sc.inherited + extra
	if len(s.Loop.Steps) > 0 {
		inner := &scope{wf: sc.wf, steps: s.Loop.Steps, prefix: itID + ".", request: sc.request,
			inherited: inherited, preserved: kept || sc.preserved, item: item, index: index, iteration: iter}
		if err := x.runDAG(ctx, inner); err != nil {
			return nil, err
		}
		content, err := x.scopeOutcome(inner)
		r := &StepResult{Status: StepCompleted, Content: content}
		if err != nil {
			r = &StepResult{Status: StepFailed, Error: err.Error()}
		}
		return r, x.record(itID, r)
	}
	return x.unit(ctx, itID, "iteration", s.Agent, func(ctx context.Context) (*StepResult, error) {
		single := &scope{wf: sc.wf, steps: sc.steps, prefix: sc.prefix, request: sc.request, inherited: sc.inherited + extra, preserved: sc.preserved}
		prompt, err := x.prompt(single, s)
		if err != nil {
			return nil, err
		}
		return x.runAgent(ctx, sc, s, itID, 1, s.Agent, s.Model, prompt)
	})
}

// unit runs something that is not a document step — a single-step loop's
// iteration, a judge — with step events of kind and its result recorded
// under id. A failure is a failed result; only a stop is an error.
func (x *execution) unit(ctx context.Context, id, kind, agent string, run func(context.Context) (*StepResult, error)) (*StepResult, error) {
	if r, ok := x.result(id); ok {
		return r, nil
	}
	info := engine.Step{RunID: x.run.ID, Actor: engine.NodeActor(x.actor, id), Kind: kind, Detail: stepDetail{Step: id, Agent: agent, Attempt: 1}}
	_ = x.host.Publish(x.ctx, engine.StepStarted{Step: info})
	r, err := run(ctx)
	if err != nil {
		info.Detail = stepDetail{Step: id, Agent: agent, Attempt: 1, Status: StepFailed}
		_ = x.host.Publish(x.ctx, engine.StepFailed{Step: info, Err: err})
		if isStop(err) {
			return nil, x.stopOr(err)
		}
		r = &StepResult{Status: StepFailed, Error: err.Error(), Attempts: 1}
		return r, x.record(id, r)
	}
	r.Status, r.Attempts = StepCompleted, 1
	d := stepDetail{Step: id, Agent: agent, Attempt: 1, Status: StepCompleted}
	if !r.Usage.IsZero() {
		d.Usage = &r.Usage
	}
	info.Detail = d
	_ = x.host.Publish(x.ctx, engine.StepCompleted{Step: info})
	x.emitArtifact(id, r)
	return r, x.record(id, r)
}

// runForEach runs one iteration per item, at most loop.maxConcurrency at
// once (all by default), ids namespaced `<id>[<index>]`. The loop fails
// if an iteration fails; its content is every iteration's, in order.
func (x *execution) runForEach(ctx context.Context, sc *scope, s *Step, id string) (*StepResult, error) {
	l := s.Loop
	items := l.ForEach.Items
	if !l.ForEach.static {
		var err error
		if items, err = l.each.evalList(x.celVars(sc, s)); err != nil {
			return nil, fmt.Errorf("forEach: %w", err)
		}
	}
	limit := l.MaxConcurrency
	if limit <= 0 {
		limit = len(items)
	}
	sem := make(chan struct{}, max(limit, 1))
	out := make([]*StepResult, len(items))
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, item := range items {
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
			errs[i] = ctx.Err()
			continue
		}
		wg.Go(func() {
			defer func() { <-sem }()
			itID := id + "[" + strconv.Itoa(i) + "]"
			out[i], errs[i] = x.iteration(ctx, sc, s, itID, itemContext(item, i), item, i, 0)
		})
	}
	wg.Wait()
	var parts []string
	for i, r := range out {
		if errs[i] != nil {
			return nil, errs[i]
		}
		if r.Status != StepCompleted {
			return nil, fmt.Errorf("forEach item %d failed: %s", i, r.Error)
		}
		parts = append(parts, r.Content)
	}
	return &StepResult{Content: strings.Join(parts, cumulativeSeparator)}, nil
}

// runRepeat runs iterations `<id>#<n>` until until holds, the judge says
// done, or maxIterations is reached — a failure when until never held
// (spec §6: the loop is then retried from iteration 0), the end of the
// loop otherwise. A judge that fails to decide lets the loop go on.
func (x *execution) runRepeat(ctx context.Context, sc *scope, s *Step, id string) (*StepResult, error) {
	l := s.Loop
	var contents []string
	extra := ""
	met := false
	for it := 0; it < *l.MaxIterations; it++ {
		itID := id + "#" + strconv.Itoa(it)
		r, err := x.iteration(ctx, sc, s, itID, extra, nil, 0, it)
		if err != nil {
			return nil, err
		}
		if r.Status != StepCompleted {
			return nil, fmt.Errorf("iteration %d failed: %s", it, r.Error)
		}
		contents = append(contents, r.Content)
		extra = fmt.Sprintf("\n\n## Previous iteration (%d) output\n%s", it, r.Content)
		if l.until.prog != nil {
			if met, err = l.until.evalBool(x.untilVars(s, itID, it, r)); err != nil {
				return nil, fmt.Errorf("until: %w", err)
			}
		}
		if !met && l.UntilAgent != "" {
			verdict, err := x.judge(ctx, sc, s, itID, r.Content)
			if err != nil {
				return nil, err
			}
			if verdict.Status == StepCompleted {
				met = verdict.Result["done"] == true
				if verdict.Content != "" {
					contents[len(contents)-1] += cumulativeSeparator + verdict.Content
					extra += "\n\n## Judge feedback\n" + verdict.Content
				}
			}
		}
		if met {
			break
		}
		if l.Delay != nil && it+1 < *l.MaxIterations {
			if err := x.waitFor(ctx, time.Duration(*l.Delay)); err != nil {
				return nil, x.stopOr(err)
			}
		}
	}
	if !met && l.until.prog != nil {
		return nil, fmt.Errorf("reached maxIterations %d before until %q held", *l.MaxIterations, *l.Until)
	}
	if l.OutputMode == OutputCumulative {
		return &StepResult{Content: strings.Join(contents, cumulativeSeparator), PreserveContent: true}, nil
	}
	return &StepResult{Content: contents[len(contents)-1]}, nil
}

// untilVars is what until sees after iteration it: the inner steps of a
// multi-step loop, or the single step's content, result and status.
func (x *execution) untilVars(s *Step, itID string, it int, r *StepResult) celVars {
	v := celVars{Steps: map[string]stepView{}, Iteration: it, Content: r.Content, Result: r.Result, Status: string(r.Status)}
	for _, in := range s.Loop.Steps {
		if ir, ok := x.result(itID + "." + in.ID); ok {
			v.Steps[in.ID] = ir.view()
		}
	}
	return v
}

// judge asks the untilAgent whether the loop is done (its result.done).
func (x *execution) judge(ctx context.Context, sc *scope, s *Step, itID, output string) (*StepResult, error) {
	prompt := fmt.Sprintf("Judge whether the loop %q is done. Call %s with done: true when it is, done: false with a reason when it is not.\n\n## Iteration output\n%s",
		s.ID, SubmitResultTool, output)
	if sc.request != "" {
		prompt += "\n\n## Request\n" + sc.request
	}
	return x.unit(ctx, itID+"/judge", "judge", s.Loop.UntilAgent, func(ctx context.Context) (*StepResult, error) {
		return x.runAgent(ctx, sc, s, itID+"/judge", 1, s.Loop.UntilAgent, "", prompt)
	})
}
