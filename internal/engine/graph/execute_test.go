package graph

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"agentd/internal/errdefs"
)

// flaky fails its first n calls per step, then answers.
func flaky(n int) behaviour {
	var mu sync.Mutex
	seen := map[string]int{}
	return func(_ context.Context, c call) (string, error) {
		mu.Lock()
		defer mu.Unlock()
		seen[c.Step]++
		if seen[c.Step] <= n {
			return "", errors.New("transient")
		}
		return "ok after retries", nil
	}
}

func reply(text string) behaviour {
	return func(context.Context, call) (string, error) { return text, nil }
}

func TestExecution(t *testing.T) {
	cases := []struct {
		name      string
		doc       string
		agents    map[string]behaviour
		wantErr   string
		statuses  map[string]StepStatus
		answer    string
		prompts   map[string][]string // step → substrings of its prompt
		notCalled []string
	}{{
		name: "dependencies finish first and their content is injected",
		doc: `{name: chain, steps: [{id: a, instructions: "Draft it"}, {id: b, instructions: "Polish it", dependsOn: [a]},
			{id: c, instructions: "Ship it", dependsOn: [b]}]}`,
		statuses: map[string]StepStatus{"a": StepCompleted, "b": StepCompleted, "c": StepCompleted},
		answer:   "default did Ship it",
		prompts: map[string][]string{
			"a": {"Draft it", "## Request\nplease"},
			"b": {"Polish it", "## Output of step a\ndefault did Draft it"},
			"c": {"## Output of step b\ndefault did Polish it"},
		},
	}, {
		name: "a false condition skips its step; its dependants still run",
		doc: `{name: cond, steps: [{id: check-a, instructions: "Check"}, {id: gate, dependsOn: [check-a], condition: "steps.check-a.content.contains('nope')"},
			{id: after, dependsOn: [gate], condition: "steps.gate.status == 'skipped'"}]}`,
		statuses:  map[string]StepStatus{"check-a": StepCompleted, "gate": StepSkipped, "after": StepCompleted},
		notCalled: []string{"gate"},
	}, {
		name:     "retries with backoff until the step succeeds",
		doc:      `{name: retry, agents: {w: {description: flaky}}, steps: [{id: a, agent: w, retries: 2}]}`,
		agents:   map[string]behaviour{"w": flaky(2)},
		statuses: map[string]StepStatus{"a": StepCompleted},
		answer:   "ok after retries",
	}, {
		name: "cascade: dependants of a failed step are cancelled, independent branches run, the run fails",
		doc: `{name: cascade, agents: {w: {description: breaks}}, steps: [{id: bad, agent: w, retries: 1}, {id: dep, dependsOn: [bad]},
			{id: dep2, dependsOn: [dep]}, {id: free}]}`,
		agents:   map[string]behaviour{"w": fail},
		wantErr:  `step(s) failed: bad (agent run "run-1/bad/2": agent broke)`,
		statuses: map[string]StepStatus{"bad": StepFailed, "dep": StepCancelled, "dep2": StepCancelled, "free": StepCompleted},
	}, {
		name: "skip-dependents: dependants are skipped, the run completes with what the rest produced",
		doc: `{name: skip, agents: {w: {description: breaks}}, options: {onStepFailure: skip-dependents},
			steps: [{id: bad, agent: w}, {id: dep, dependsOn: [bad]}, {id: dep2, dependsOn: [dep]}, {id: free, instructions: Free}]}`,
		agents:   map[string]behaviour{"w": fail},
		statuses: map[string]StepStatus{"bad": StepFailed, "dep": StepSkipped, "dep2": StepSkipped, "free": StepCompleted},
		answer:   "default did Free",
	}, {
		name: "abort: the first failure stops running steps and the run",
		doc: `{name: abort, agents: {w: {description: breaks}, s: {description: waits}}, options: {onStepFailure: abort},
			steps: [{id: slow, agent: s}, {id: bad, agent: w}, {id: later, dependsOn: [bad]}]}`,
		agents:    map[string]behaviour{"w": fail, "s": block},
		wantErr:   `step "bad" failed (onStepFailure: abort)`,
		statuses:  map[string]StepStatus{"bad": StepFailed},
		notCalled: []string{"later"},
	}, {
		name:     "step timeout fails the step",
		doc:      `{name: timeout, agents: {s: {description: waits}}, steps: [{id: a, agent: s, timeout: "1s"}]}`,
		agents:   map[string]behaviour{"s": block},
		wantErr:  `step "a": timed out after 1s`,
		statuses: map[string]StepStatus{"a": StepFailed},
	}, {
		name: "forEach over a static list: namespaced ids, items injected, inner steps per item",
		doc: `{name: each, steps: [{id: each, loop: {forEach: ["x", {"k": 1}], maxConcurrency: 1,
			steps: [{id: fetch, instructions: Fetch}, {id: sum, instructions: Sum, dependsOn: [fetch]}]}}]}`,
		statuses: map[string]StepStatus{"each": StepCompleted, "each[0].fetch": StepCompleted, "each[1].sum": StepCompleted},
		prompts: map[string][]string{
			"each[0].fetch": {"## forEach Item (index: 0)\n\"x\""},
			"each[1].sum":   {"## forEach Item (index: 1)\n{\"k\":1}", "## Output of step fetch\ndefault did Fetch"},
		},
		answer: "default did Sum\n\n---\n\ndefault did Sum",
	}, {
		name: "forEach over a CEL list from a dependency's submitted result",
		doc: `{name: fanout, agents: {lister: {description: lists, resultSchema: {type: object, properties: {services: {type: array}}, required: [services]}}},
			steps: [{id: list-services, agent: lister}, {id: deploy, dependsOn: [list-services], instructions: Deploy,
			loop: {forEach: "steps.list-services.result.services"}}]}`,
		agents:   map[string]behaviour{"lister": reply(`CALL submit_result {"services": ["api", "web"]}`)},
		statuses: map[string]StepStatus{"list-services": StepCompleted, "deploy[0]": StepCompleted, "deploy[1]": StepCompleted},
		prompts:  map[string][]string{"deploy[1]": {"## forEach Item (index: 1)\n\"web\"", `## Result of step list-services`}},
	}, {
		name:    "an agent with a resultSchema that never submits fails its step",
		doc:     `{name: nosubmit, agents: {a: {description: x, resultSchema: {type: object}}}, steps: [{id: s, agent: a}]}`,
		wantErr: "resultSchema defined but submit_result never called",
	}, {
		name: "repeat-until on the step's own content, cumulative output",
		doc: `{name: until, agents: {w: {description: counts}}, steps: [{id: poll, agent: w,
			loop: {maxIterations: 5, until: "content.contains('DONE') && iteration == 2", outputMode: cumulative}}]}`,
		agents:    map[string]behaviour{"w": counter("DONE")},
		statuses:  map[string]StepStatus{"poll": StepCompleted, "poll#2": StepCompleted},
		answer:    "round 1\n\n---\n\nround 2\n\n---\n\nround 3 DONE",
		prompts:   map[string][]string{"poll#1": {"## Previous iteration (0) output\nround 1"}},
		notCalled: []string{"poll#3"},
	}, {
		name:     "until that never holds fails the loop at maxIterations",
		doc:      `{name: never, steps: [{id: poll, loop: {maxIterations: 2, until: "content == 'never'"}}]}`,
		wantErr:  `reached maxIterations 2 before until "content == 'never'" held`,
		statuses: map[string]StepStatus{"poll#1": StepCompleted},
	}, {
		name: "untilAgent: a judge's result.done ends a multi-step loop",
		doc: `{name: debate, agents: {judge: {description: judges, resultSchema: {type: object, properties: {done: {type: boolean}}, required: [done]}}},
			steps: [{id: debate, loop: {maxIterations: 4, untilAgent: judge, steps: [{id: pro}, {id: con, dependsOn: [pro]}]}}]}`,
		agents:    map[string]behaviour{"judge": judgeAfter(2)},
		statuses:  map[string]StepStatus{"debate": StepCompleted, "debate#1.con": StepCompleted, "debate#1/judge": StepCompleted},
		notCalled: []string{"debate#2.pro"},
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			agents := newFakeAgents(c.agents)
			e := newTestEngine(t, c.doc, agents)
			h, board, err := execute(t, e, "please")
			switch {
			case c.wantErr == "" && err != nil:
				t.Fatalf("Execute: %v", err)
			case c.wantErr != "" && (err == nil || !strings.Contains(err.Error(), c.wantErr)):
				t.Fatalf("Execute: %v, want an error containing %q", err, c.wantErr)
			}
			st := stateOf(t, h)
			for id, want := range c.statuses {
				if r := st.Results[id]; r == nil || r.Status != want {
					t.Errorf("step %s: %+v, want %s", id, r, want)
				}
			}
			if c.answer != "" && answerOf(board) != c.answer {
				t.Errorf("answer %q, want %q", answerOf(board), c.answer)
			}
			for step, wants := range c.prompts {
				cl, ok := agents.callOf(step)
				for _, w := range wants {
					if !ok || !strings.Contains(cl.Prompt, w) {
						t.Errorf("prompt of %s lacks %q:\n%s", step, w, cl.Prompt)
					}
				}
			}
			for _, step := range c.notCalled {
				if _, ok := agents.callOf(step); ok {
					t.Errorf("step %s ran", step)
				}
			}
		})
	}
}

// counter answers "round N", with suffix from the third call on.
func counter(suffix string) behaviour {
	var n atomic.Int64
	return func(context.Context, call) (string, error) {
		i := n.Add(1)
		if i >= 3 {
			return "round " + strconv.FormatInt(i, 10) + " " + suffix, nil
		}
		return "round " + strconv.FormatInt(i, 10), nil
	}
}

// judgeAfter says done from its n-th call on.
func judgeAfter(n int64) behaviour {
	var calls atomic.Int64
	return func(context.Context, call) (string, error) {
		if calls.Add(1) >= n {
			return `CALL submit_result {"done": true, "reason": "settled"}`, nil
		}
		return `CALL submit_result {"done": false}`, nil
	}
}

func TestMaxConcurrencyBoundsAgentSteps(t *testing.T) {
	var mu sync.Mutex
	arrived := 0
	all := make(chan struct{})
	agents := newFakeAgents(map[string]behaviour{"w": func(ctx context.Context, _ call) (string, error) {
		mu.Lock()
		arrived++
		if arrived == 2 {
			close(all)
		}
		mu.Unlock()
		select { // the two first steps must run at the same time
		case <-all:
		case <-ctx.Done():
			return "", ctx.Err()
		}
		return "ok", nil
	}})
	e := newTestEngine(t, `{name: wide, agents: {w: {description: w}}, options: {maxConcurrency: 2},
		steps: [{id: a, agent: w}, {id: b, agent: w}, {id: c, agent: w}, {id: d, agent: w}, {id: e, agent: w}]}`, agents)
	if _, _, err := execute(t, e, "go"); err != nil {
		t.Fatal(err)
	}
	if agents.peak != 2 {
		t.Errorf("peak concurrency %d, want 2 (maxConcurrency)", agents.peak)
	}
}

func TestUnresolvableAgentFailsNew(t *testing.T) {
	_, err := New(Config{Workflow: mustParse(t, `{name: x, steps: [{id: a}, {id: b, model: unresolvable}]}`), Agents: newFakeAgents(nil)})
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), `steps[1]: the default agent: no provider for model "unresolvable"`) {
		t.Fatalf("New: %v", err)
	}
}
