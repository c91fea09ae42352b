package enginetest

import (
	"encoding/json"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/event"
)

// checkLifecycle checks the envelopes of one Execute against the event
// contract: run.start first and run.end last, exactly once each; every
// envelope on the run's subjects and stamped with its id; a run.end status
// matching err; stream deltas that decode; no step finishing that never
// started.
func checkLifecycle(t suiteT, envs []event.Envelope, runID string, err error) {
	t.Helper()
	startSubj, endSubj := engine.SubjectRunStart(runID), engine.SubjectRunEnd(runID)
	if len(envs) == 0 {
		t.Errorf("no events published; want run.start … run.end")
		return
	}
	if envs[0].Subject != startSubj {
		t.Errorf("first event is %q, want %q", envs[0].Subject, startSubj)
	}
	if last := envs[len(envs)-1]; last.Subject != endSubj {
		t.Errorf("last event is %q, want %q (run.end must be published on every exit path, last)", last.Subject, endSubj)
	} else {
		checkEndPayload(t, last, err)
	}
	prefix := engine.SubjectPrefix + engine.SanitiseID(runID) + "."
	starts, ends := 0, 0
	open := map[string]int{} // step actor token → started and not finished
	for i, env := range envs {
		subj := string(env.Subject)
		switch env.Subject {
		case startSubj:
			starts++
		case endSubj:
			ends++
		}
		if !strings.HasPrefix(subj, prefix) {
			t.Errorf("event %d has subject %q outside the run's %q…", i, subj, prefix)
			continue
		}
		if env.RunID != runID {
			t.Errorf("event %d (%s) has RunID %q, want %q", i, subj, env.RunID, runID)
		}
		if engine.IsStreamDelta(env.Subject) {
			if _, derr := engine.DecodeStreamDelta(env); derr != nil {
				t.Errorf("event %d: %v", i, derr)
			}
		}
		checkStep(t, i, strings.TrimPrefix(subj, prefix), open)
	}
	if starts != 1 {
		t.Errorf("run.start published %d times, want exactly once", starts)
	}
	if ends != 1 {
		t.Errorf("run.end published %d times, want exactly once", ends)
	}
}

// checkStep tracks step.<actor>.start against .complete / .error.
func checkStep(t suiteT, i int, rest string, open map[string]int) {
	t.Helper()
	actor, ok := strings.CutPrefix(rest, "step.")
	if !ok {
		return
	}
	dot := strings.LastIndexByte(actor, '.')
	if dot < 0 {
		return
	}
	actor, verb := actor[:dot], actor[dot+1:]
	switch verb {
	case "start":
		open[actor]++
	case "complete", "error":
		if open[actor] == 0 {
			t.Errorf("event %d: step %q %s without a step.start", i, actor, verb)
			return
		}
		open[actor]--
	}
}

func checkEndPayload(t suiteT, env event.Envelope, err error) {
	t.Helper()
	p, derr := engine.DecodeRunEnd(env)
	if derr != nil {
		t.Errorf("run.end: %v", derr)
		return
	}
	if want := engine.RunStatusOf(err); p.Status != want {
		t.Errorf("run.end status %q, want %q for returned error %v (publish it with engine.PublishRunEnd)", p.Status, want, err)
	}
}

// checkStartResumed: the run.start of a resumed attempt says so, so that
// consumers can tell an attempt from a fresh run.
func checkStartResumed(t suiteT, envs []event.Envelope) {
	t.Helper()
	if len(envs) == 0 {
		return
	}
	var p engine.RunStartPayload
	if err := json.Unmarshal(envs[0].Payload, &p); err != nil || !p.Resumed {
		t.Errorf("run.start of a resumed attempt does not say resumed:true (payload %s); publish it with engine.PublishRunStart",
			envs[0].Payload)
	}
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
