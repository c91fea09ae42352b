package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// errParked is what parkingHost's AskUser answers when it parks the run,
// as agentd's runtime does.
var errParked = engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})

// parkingHost is a host shaped like agentd's runtime for user prompts: a
// question parks the run (AskUser answers errParked), and the next
// attempt, resumed from the latest checkpoint, gets the reply from the
// same AskUser call.
type parkingHost struct {
	*enginetest.RecordingHost
	mu    sync.Mutex
	reply *engine.UserReply
	marks []mark // the attempt frames (framed)
}

func newParkingHost() *parkingHost {
	h := &parkingHost{RecordingHost: enginetest.NewRecordingHost()}
	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		h.mu.Lock()
		defer h.mu.Unlock()
		if h.reply == nil {
			return engine.UserReply{}, errParked
		}
		r := *h.reply
		h.reply = nil
		return r, nil
	}
	return h
}

// converse runs a conversation: the first attempt starts from text, and
// every attempt that parks is resumed from the latest checkpoint with the
// next answer. It returns the last attempt's board and error and how many
// answers were used.
func converse(t *testing.T, eng engine.Engine, h *parkingHost, runID, text string, answers ...string) (*engine.Board, int, error) {
	t.Helper()
	run := engine.Run{ID: runID}
	board, err := h.framed(t, eng, run, userBoard(text))
	used := 0
	for errors.Is(err, errParked) || errdefs.IsInterrupted(err) && strings.Contains(fmt.Sprint(err), "input-required") {
		if used == len(answers) {
			return board, used, err
		}
		h.mu.Lock()
		h.reply = &engine.UserReply{Parts: []model.Part{model.TextPart(answers[used])}}
		h.mu.Unlock()
		used++
		cps := h.Checkpoints()
		cp := cps[len(cps)-1]
		run.ResumeFrom = &cp
		board, err = h.framed(t, eng, run, engine.NewBoard())
	}
	return board, used, err
}

// trail renders a run's events one per line, for golden files: attempt
// frames (as the host draws them, see framed), steps with their node (and
// tool), deltas and artifacts.
func trail(h *parkingHost) string {
	var b strings.Builder
	h.mu.Lock()
	marks := slices.Clone(h.marks)
	h.mu.Unlock()
	for i, ev := range h.Events() {
		for len(marks) > 0 && marks[0].at == i {
			b.WriteString(marks[0].line + "\n")
			marks = marks[1:]
		}
		writeTrail(&b, ev)
	}
	for _, m := range marks {
		b.WriteString(m.line + "\n")
	}
	return b.String()
}

func writeTrail(b *strings.Builder, ev engine.Event) {
	step := func(verb string, s engine.Step, err error) {
		detail, _ := json.Marshal(s.Detail)
		fmt.Fprintf(b, "step.%s %s %s", verb, s.Kind, detail)
		if err != nil {
			fmt.Fprintf(b, " error=%q", err.Error())
		}
		b.WriteByte('\n')
	}
	switch e := ev.(type) {
	case engine.ArtifactUpdate:
		fmt.Fprintf(b, "artifact %s %s\n", e.Artifact.ID, e.Artifact.Parts[0].Data)
	case engine.StepStarted:
		step("start", e.Step, nil)
	case engine.StepCompleted:
		step("complete", e.Step, nil)
	case engine.StepFailed:
		step("error", e.Step, e.Err)
	case engine.Token:
		fmt.Fprintf(b, "say %q\n", e.Text)
	case engine.ToolCall:
		fmt.Fprintf(b, "call %s %s %s\n", e.Name, e.ID, e.Arguments)
	case engine.ToolResult:
		fmt.Fprintf(b, "result %s error=%v %s\n", e.Name, e.IsError, e.Content)
	}
}

// mark is a line of the trail a host draws itself, before event at.
type mark struct {
	at   int
	line string
}

// framed executes one attempt of run as agentd's runtime frames it: a
// run.start line (with the step it resumes at) before the engine's
// events, a run.end line (with the outcome and its cause) after them.
func (h *parkingHost) framed(t testing.TB, eng engine.Engine, run engine.Run, board *engine.Board) (*engine.Board, error) {
	t.Helper()
	resume := ""
	if run.ResumeFrom != nil {
		resume = run.ResumeFrom.Step
	}
	h.mark("run.start " + resume)
	out, err := execute(t, eng, run, board, h)
	var cause engine.Cause
	var ie engine.InterruptedError
	if errors.As(err, &ie) {
		cause = ie.Cause
	}
	h.mark("run.end " + outcome(err) + string(cause))
	return out, err
}

func (h *parkingHost) mark(line string) {
	at := len(h.Events())
	h.mu.Lock()
	h.marks = append(h.marks, mark{at: at, line: line})
	h.mu.Unlock()
}

// outcome names how an attempt ended, as the runtime's run.end says it.
func outcome(err error) string {
	switch {
	case err == nil:
		return "completed"
	case errdefs.IsInterrupted(err):
		return "interrupted"
	case errdefs.IsAborted(err) || errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "failed"
}
