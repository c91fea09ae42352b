package enginetest

import (
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// checkResumeForeign: a checkpoint of another run is a Validation error
// (an engine that cannot resume at all may answer NotAvailable instead).
func checkResumeForeign(t suiteT, c Case) {
	requireSucceed(t, c)
	in := c.Succeed()
	in.Run.ID = "enginetest-resume-foreign"
	in.Run.ResumeFrom = &engine.Checkpoint{
		ExecID:    in.Run.ID + "-other",
		Step:      "enginetest",
		Board:     boardOf(in).Snapshot(),
		Timestamp: time.Now().UTC(),
	}
	x := run(t, c, "resume-foreign", in)
	resumable := engine.CapabilitiesOf(c.Engine).SupportsResume
	switch {
	case errdefs.IsValidation(x.err):
	case !resumable && errdefs.IsNotAvailable(x.err):
	default:
		t.Errorf("resume from a checkpoint of run %q returned %v (class %q), want a Validation error",
			in.Run.ResumeFrom.ExecID, x.err, errdefs.ClassOf(x.err))
	}
	checkRejected(t, x)
}

// checkResumeUnsupported: an engine that does not declare SupportsResume
// refuses a resume with NotAvailable instead of restarting silently.
func checkResumeUnsupported(t suiteT, c Case) {
	requireSucceed(t, c)
	if engine.CapabilitiesOf(c.Engine).SupportsResume {
		t.Skip("engine declares SupportsResume")
	}
	in := c.Succeed()
	in.Run.ID = "enginetest-resume-unsupported"
	in.Run.ResumeFrom = &engine.Checkpoint{
		ExecID:    in.Run.ID,
		Step:      "enginetest",
		Board:     boardOf(in).Snapshot(),
		Timestamp: time.Now().UTC(),
	}
	x := run(t, c, "resume-unsupported", in)
	if !errdefs.IsNotAvailable(x.err) {
		t.Errorf("engine without SupportsResume given ResumeFrom returned %v (class %q), want NotAvailable",
			x.err, errdefs.ClassOf(x.err))
	}
	checkRejected(t, x)
}

// checkResumeOwn: an engine declaring SupportsResume completes a run
// resumed from a checkpoint it wrote, starting from the checkpoint's
// board: the suite plants a marker var in that board (never in the board
// argument), so an engine that silently restarts loses it.
func checkResumeOwn(t suiteT, factory func(testing.TB) Case) {
	c := factory(t)
	requireSucceed(t, c)
	if !engine.CapabilitiesOf(c.Engine).SupportsResume {
		t.Skip("engine does not declare SupportsResume")
	}
	first := run(t, c, "resume-source", c.Succeed())
	if first.err != nil {
		t.Fatalf("Execute on the Succeed inputs: %v", first.err)
	}
	cps := first.host.Checkpoints()
	if len(cps) == 0 {
		t.Fatalf("engine declares SupportsResume but wrote no checkpoint on the Succeed path to resume from")
	}
	picks := []engine.Checkpoint{cps[0]}
	if len(cps) > 1 {
		picks = append(picks, cps[len(cps)-1])
	}
	for i, cp := range picks {
		resumeOnce(t, factory(t), first.run.ID, cp, i)
	}
}

func resumeOnce(t suiteT, c Case, runID string, cp engine.Checkpoint, i int) {
	t.Helper()
	marker := "resumed-from-" + cp.Step
	board := engine.RestoreBoard(cp.Board)
	board.SetVar(resumeVar, marker)
	cp.Board = board.Snapshot()

	in := c.Succeed()
	in.Run.ID = runID
	in.Run.ResumeFrom = &cp
	ctx := engine.WithResumeContext(t.Context(), engine.ResumeContext{
		Attempt: 2, Signal: "enginetest", StartedAt: cp.OriginalStartedAt,
		CheckpointAt: cp.Timestamp, Step: cp.Step,
	})
	x := start(t, c, ctx, "resume-own", in)
	x.wait("resuming")
	if x.err != nil {
		t.Errorf("resume #%d from own checkpoint at step %q: %v", i, cp.Step, x.err)
		return
	}
	checkEvents(t, x.host.Events())
	if x.board == nil {
		t.Errorf("resume #%d from step %q returned a nil board", i, cp.Step)
		return
	}
	if got := x.board.GetVarString(resumeVar); got != marker {
		t.Errorf("resume #%d from step %q: the final board lacks the checkpoint board's var %q "+
			"(got %q, want %q): the engine ignored ResumeFrom.Board and restarted", i, cp.Step, resumeVar, got, marker)
	}
}

// checkRejected: a refused Execute may publish nothing at all; if it
// publishes, the event rules hold.
func checkRejected(t suiteT, x *execution) {
	t.Helper()
	checkEvents(t, x.host.Events())
	if n := len(x.host.Checkpoints()); n > 0 {
		t.Errorf("a refused resume wrote %d checkpoint(s)", n)
	}
}

func boardOf(in Input) *engine.Board {
	if in.Board == nil {
		return engine.NewBoard()
	}
	return in.Board
}
