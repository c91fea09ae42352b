package graph

import (
	"context"
	"slices"
)

// scope is one DAG being run: the top level, an included sub-workflow, or
// one iteration of a loop.
type scope struct {
	wf    *Workflow // whose agents the steps name
	steps []*Step
	// prefix namespaces the ids of the scope's steps: "", "deploy.",
	// "each[2].", "review#1.".
	prefix string
	// request is the user's request, given to every agent step.
	request string
	// inherited is context every agent step of the scope receives: the
	// enclosing step's dependencies, the forEach item, the previous
	// iteration's output.
	inherited string
	// preserved: inherited holds content aggregated on purpose
	// (StepResult.PreserveContent), so prompts escape MaxPromptBytes.
	preserved bool
	// loop variables for CEL and prompts.
	item      any
	index     int
	iteration int
}

func (sc *scope) id(s *Step) string { return sc.prefix + s.ID }

// finished is a step goroutine's report to its scope.
type finished struct {
	i   int
	err error
}

// runDAG runs the steps of sc: every step whose dependencies have all
// finished starts, in the scheduler's order, until none is left. Step
// failures are recorded as results, not returned; the error is why the
// run stops (interrupt, cancellation, timeout, abort, a failed
// checkpoint). Every step goroutine has returned when runDAG does.
func (x *execution) runDAG(ctx context.Context, sc *scope) error {
	pos := make(map[string]int, len(sc.steps))
	for i, s := range sc.steps {
		pos[s.ID] = i
	}
	const (
		pending = iota
		running
		done
	)
	state := make([]int, len(sc.steps))
	order := x.priority(sc)
	busy := map[string]int{} // running steps per agent, for least-busy
	results := make(chan finished)
	inFlight := 0
	var fatal error
	for {
		for fatal == nil && x.stopErr() == nil {
			i, ok := x.nextReady(sc, order, state, pos, busy)
			if !ok {
				break
			}
			s := sc.steps[i]
			if _, ok := x.result(sc.id(s)); ok {
				state[i] = done // finished before a resume
				continue
			}
			if r := x.blockedBy(sc, s); r != nil {
				state[i] = done
				if err := x.record(sc.id(s), r); err != nil {
					fatal = err
				}
				x.publishSettled(sc.id(s), s, r)
				continue
			}
			state[i] = running
			busy[s.Agent]++
			inFlight++
			go func() { results <- finished{i, x.runStep(ctx, sc, s)} }()
		}
		if inFlight == 0 {
			break
		}
		f := <-results
		inFlight--
		state[f.i] = done
		busy[sc.steps[f.i].Agent]--
		if f.err != nil && fatal == nil {
			fatal = f.err
		}
	}
	if fatal != nil {
		return fatal
	}
	return x.stopErr()
}

// nextReady returns the first step in order whose dependencies have all
// finished. With the least-busy scheduler, among those ready it takes the
// one whose agent runs the fewest steps.
func (x *execution) nextReady(sc *scope, order []int, state []int, pos map[string]int, busy map[string]int) (int, bool) {
	best := -1
	for _, i := range order {
		if state[i] != 0 {
			continue
		}
		ready := true
		for _, d := range sc.steps[i].DependsOn {
			if j, ok := pos[d]; ok && state[j] != 2 {
				ready = false
				break
			}
		}
		if !ready {
			continue
		}
		if x.e.wf.Options.Scheduler != SchedulerLeastBusy {
			return i, true
		}
		if best < 0 || busy[sc.steps[i].Agent] < busy[sc.steps[best].Agent] {
			best = i
		}
	}
	return best, best >= 0
}

// blockedBy returns the result of a step that cannot run because a
// dependency failed — cancelled under cascade and abort, skipped under
// skip-dependents — or nil when it may run.
func (x *execution) blockedBy(sc *scope, s *Step) *StepResult {
	for _, d := range s.DependsOn {
		r, ok := x.result(sc.prefix + d)
		if !ok || !r.failedLike() {
			continue
		}
		msg := "dependency " + d + " " + string(r.Status)
		if x.e.wf.Options.OnStepFailure == FailureSkipDependents {
			return &StepResult{Status: StepSkipped, SkipReason: skipDependency, Error: msg}
		}
		return &StepResult{Status: StepCancelled, Error: msg}
	}
	return nil
}

// priority orders a scope's steps for the scheduler: dependency-first
// (the default) puts the steps with the most transitive dependents first,
// so the critical path starts early; round-robin and least-busy keep
// document order.
func (x *execution) priority(sc *scope) []int {
	order := make([]int, len(sc.steps))
	for i := range order {
		order[i] = i
	}
	switch x.e.wf.Options.Scheduler {
	case SchedulerRoundRobin, SchedulerLeastBusy:
		return order
	}
	weight := dependentCounts(sc.steps)
	slices.SortStableFunc(order, func(a, b int) int { return weight[b] - weight[a] })
	return order
}

// dependentCounts counts each step's transitive dependents.
func dependentCounts(steps []*Step) []int {
	pos := make(map[string]int, len(steps))
	for i, s := range steps {
		pos[s.ID] = i
	}
	children := make([][]int, len(steps))
	for i, s := range steps {
		for _, d := range s.DependsOn {
			if j, ok := pos[d]; ok {
				children[j] = append(children[j], i)
			}
		}
	}
	counts := make([]int, len(steps))
	for i := range steps {
		seen := map[int]bool{}
		stack := slices.Clone(children[i])
		for len(stack) > 0 {
			n := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if !seen[n] {
				seen[n] = true
				stack = append(stack, children[n]...)
			}
		}
		counts[i] = len(seen)
	}
	return counts
}
