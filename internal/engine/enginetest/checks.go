package enginetest

import (
	"fmt"

	"agentd/internal/engine"
)

// checkEvents checks the events of one Execute against the event
// contract: every event is one a host accepts (engine.Validate), and no
// step completes or fails that never started. (The host frames each
// attempt with its own start and end; a step interrupted to park the run
// may stay open, to go on when the run resumes.)
func checkEvents(t suiteT, evs []engine.Event) {
	t.Helper()
	open := map[string]int{} // step actor → started and not ended
	for i, ev := range evs {
		if err := engine.Validate(ev); err != nil {
			t.Errorf("event %d (%s): %v", i, Describe(ev), err)
		}
		switch e := ev.(type) {
		case engine.StepStarted:
			open[e.Actor]++
		case engine.StepCompleted:
			closeStep(t, i, "completed", e.Actor, open)
		case engine.StepFailed:
			closeStep(t, i, "failed", e.Actor, open)
		}
	}
}

func closeStep(t suiteT, i int, verb, actor string, open map[string]int) {
	t.Helper()
	if open[actor] == 0 {
		t.Errorf("event %d: step %q %s without having started", i, actor, verb)
		return
	}
	open[actor]--
}

// Describe names an event for tests and failure messages: its kind, as
// the log names it, and its actor (an artifact: its id; progress: its
// tool) — "step.start wf.node.s1", "token echo", "artifact a1".
func Describe(ev engine.Event) string {
	switch e := ev.(type) {
	case engine.StepStarted:
		return "step.start " + e.Actor
	case engine.StepCompleted:
		return "step.complete " + e.Actor
	case engine.StepFailed:
		return "step.error " + e.Actor
	case engine.Token:
		return "token " + e.Actor
	case engine.Reasoning:
		return "reasoning " + e.Actor
	case engine.ToolCall:
		return "tool_call " + e.Actor
	case engine.ToolResult:
		return "tool_result " + e.Actor
	case engine.ArtifactUpdate:
		return "artifact " + e.Artifact.ID
	case engine.ToolProgress:
		return "progress " + e.Tool
	case engine.Plan:
		return "plan " + e.Actor
	case engine.Verdict:
		return "verdict " + e.Actor
	case engine.Compaction:
		return "compaction " + e.Actor
	case engine.Outcome:
		return "outcome " + e.Status
	case engine.WorkflowNote:
		return "workflow " + e.Kind + " " + e.Actor
	}
	return fmt.Sprintf("%T", ev)
}

// checkCapabilitiesHonoured compares what the successful execution did
// with what the engine declares.
func checkCapabilitiesHonoured(t suiteT, c Case, x *execution) {
	t.Helper()
	caps := engine.CapabilitiesOf(c.Engine)
	cps := x.host.Checkpoints()
	for _, err := range x.host.CheckpointErrors() {
		t.Errorf("%v", err)
	}
	switch {
	case caps.EmitsCheckpoint && len(cps) == 0:
		t.Errorf("engine declares EmitsCheckpoint but wrote no checkpoint on a successful run")
	case !caps.EmitsCheckpoint && len(cps) > 0:
		t.Errorf("engine wrote %d checkpoint(s) but does not declare EmitsCheckpoint", len(cps))
	}
	for i, cp := range cps {
		if cp.ExecID != x.run.ID {
			t.Errorf("checkpoint %d has ExecID %q, want the run's %q", i, cp.ExecID, x.run.ID)
		}
		if cp.Board == nil {
			t.Errorf("checkpoint %d (step %q) has no board", i, cp.Step)
		}
	}
	if n := len(x.host.Prompts()); n > 0 && !caps.EmitsUserPrompt {
		t.Errorf("engine asked the user %d time(s) but does not declare EmitsUserPrompt", n)
	}
}
