package enginetest

import (
	"context"
	"maps"
	"strconv"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// flaw is a deliberate contract violation of the reference engine.
type flaw int

const (
	flawNone              flaw = iota
	flawEmptyToken             // publishes a token without text
	flawIgnoresInterrupt       // waits on ctx only
	flawRestartsOnResume       // declares SupportsResume, ignores ResumeFrom
	flawNoResumeRestarts       // no SupportsResume, ignores ResumeFrom anyway
	flawMutatesAttributes      // writes into run.Attributes
	flawNoCheckpoint           // declares EmitsCheckpoint, never writes one
	flawMutatesCheckpoint      // writes into run.ResumeFrom's board
)

// Board var "mode" drives the reference engine down each exit path.
const (
	modeOK    = "ok"
	modeFail  = "fail"
	modeBlock = "block"
)

// stepper is the reference engine: three steps, a token and a checkpoint
// per step; resumes after the checkpoint's step.
type stepper struct{ flaw flaw }

func (s stepper) Capabilities() engine.Capabilities {
	return engine.Capabilities{
		SupportsResume:  s.flaw != flawNoResumeRestarts,
		EmitsCheckpoint: true,
	}
}

const stepCount = 3

func (s stepper) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (*engine.Board, error) {
	begin := 0
	switch {
	case run.ResumeFrom == nil, s.flaw == flawRestartsOnResume, s.flaw == flawNoResumeRestarts:
	default:
		if err := engine.ValidateResume(run); err != nil {
			return board, err
		}
		if s.flaw == flawMutatesCheckpoint {
			run.ResumeFrom.Board.Vars["touched"] = true
		}
		board = engine.RestoreBoard(run.ResumeFrom.Board)
		n, err := strconv.Atoi(run.ResumeFrom.Step)
		if err != nil {
			return board, errdefs.Validationf("resume run %q: bad step %q", run.ID, run.ResumeFrom.Step)
		}
		begin = n + 1
	}
	if s.flaw == flawMutatesAttributes {
		run.Attributes["touched"] = "yes"
	}
	for i := begin; i < stepCount; i++ {
		if err := s.step(ctx, run, host, board, i); err != nil {
			return board, err
		}
	}
	return board, nil
}

func (s stepper) step(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board, i int) error {
	step := engine.Step{RunID: run.ID, Actor: "ref.step" + strconv.Itoa(i), Kind: "step"}
	_ = host.Publish(ctx, engine.StepStarted{Step: step})
	err := s.work(ctx, host, board, i)
	if err != nil {
		_ = host.Publish(ctx, engine.StepFailed{Step: step, Err: err})
		return err
	}
	text := "t" + strconv.Itoa(i)
	if s.flaw == flawEmptyToken {
		text = ""
	}
	_ = host.Publish(ctx, engine.Token{Actor: step.Actor, Text: text})
	board.SetVar("last_step", i)
	_ = host.Publish(ctx, engine.StepCompleted{Step: step})
	if s.flaw == flawNoCheckpoint {
		return nil
	}
	return host.Checkpoint(ctx, engine.Checkpoint{
		ExecID: run.ID, Step: strconv.Itoa(i), Board: board.Snapshot(),
		Attributes: maps.Clone(run.Attributes), Timestamp: time.Now().UTC(),
	})
}

// work does step i's work as the board's mode asks: fail, block or
// nothing.
func (s stepper) work(ctx context.Context, host engine.Host, board *engine.Board, i int) error {
	switch mode := board.GetVarString("mode"); {
	case i == 1 && mode == modeFail:
		return errdefs.Internalf("step %d failed as asked", i)
	case i == 1 && mode == modeBlock:
		return s.block(ctx, host)
	}
	return nil
}

// block waits for what ends a blocked step: an interrupt or ctx.
func (s stepper) block(ctx context.Context, host engine.Host) error {
	intr := host.Interrupts()
	if s.flaw == flawIgnoresInterrupt {
		intr = nil
	}
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case in, ok := <-intr:
			if !ok {
				intr = nil
				continue
			}
			return engine.Interrupted(in)
		}
	}
}

// stepperCase is the factory for the reference engine with flaw f.
func stepperCase(f flaw, timeout time.Duration) Case {
	input := func(mode string) func() Input {
		return func() Input {
			b := engine.NewBoard()
			b.SetVar("mode", mode)
			return Input{Run: engine.Run{Attributes: map[string]string{"tenant": "t1"}}, Board: b}
		}
	}
	return Case{
		Engine:   stepper{flaw: f},
		Succeed:  input(modeOK),
		Fail:     input(modeFail),
		Block:    input(modeBlock),
		Timeout:  timeout,
		Deadline: 20 * time.Millisecond,
	}
}
