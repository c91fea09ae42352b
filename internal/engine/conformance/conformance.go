package conformance

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Behaviours lists the prefixes the engine understands, in match order
// (longer prefixes first where one extends another).
var Behaviours = []string{
	"tck-complete-task", "tck-input-required", "tck-reject-task", "tck-message-response",
	"tck-artifact-file-url", "tck-artifact-file", "tck-artifact-text", "tck-artifact-data",
	"tck-long-running", "tck-multi-turn", "tck-auth-required", "tck-cancel", "tck-stream-basic",
	"tck-stream-chunked", "tck-task-failure",
}

// LongRunning is how long tck-long-running works before it completes.
const LongRunning = 3 * time.Second

// StreamPace spaces tck-stream-basic's updates, so that a second
// subscriber can attach while it runs.
const StreamPace = 100 * time.Millisecond

// Engine runs the conformance behaviours.
type Engine struct {
	agentID string
	// delay paces tck-long-running and chunked streaming; tests shorten it.
	delay time.Duration
}

// New returns the engine for the agent agentID.
func New(agentID string) *Engine { return &Engine{agentID: agentID, delay: LongRunning} }

// WithDelay returns a copy whose long-running behaviour takes d.
func (e *Engine) WithDelay(d time.Duration) *Engine { c := *e; c.delay = d; return &c }

// Capabilities declares resume (after input) and checkpoints.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsUserPrompt: true, EmitsCheckpoint: true}
}

// CanResume accepts the engine's own "ask:<behaviour>" checkpoints.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	if !strings.HasPrefix(cp.Step, "ask:") {
		return errdefs.Validationf("conformance: cannot resume from step %q", cp.Step)
	}
	return nil
}

// Execute runs one attempt.
// AnswersDirectly: tck-message-response is answered with a Message, not a
// Task (engine.DirectAnswerer), so that an A2A stream carries that Message
// alone.
func (e *Engine) AnswersDirectly(msg model.Message) bool {
	return behaviour(strings.TrimSpace(msg.Text())) == "tck-message-response"
}

func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (out *engine.Board, err error) {
	if err := engine.ValidateResume(run); err != nil {
		return board, err
	}
	if run.ResumeFrom != nil {
		if err := e.CanResume(*run.ResumeFrom); err != nil {
			return board, err
		}
		board = engine.RestoreBoard(run.ResumeFrom.Board)
	}
	if board == nil {
		board = engine.NewBoard()
	}
	step := engine.Step{RunID: run.ID, Actor: e.agentID}
	_ = host.Publish(ctx, engine.StepStarted{Step: step})
	x := &turn{e: e, ctx: ctx, run: run, host: host, board: board}
	if run.ResumeFrom != nil {
		err = x.resume(strings.TrimPrefix(run.ResumeFrom.Step, "ask:"))
	} else {
		err = x.start(x.userText())
	}
	if err != nil && !errdefs.IsInterrupted(err) {
		_ = host.Publish(ctx, engine.StepFailed{Step: step, Err: err})
	} else if err == nil {
		_ = host.Publish(ctx, engine.StepCompleted{Step: step})
	}
	return board, err
}

// turn is one attempt's working state.
type turn struct {
	e     *Engine
	ctx   context.Context
	run   engine.Run
	host  engine.Host
	board *engine.Board
}

func (x *turn) userText() string {
	msgs := x.board.Channel(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			return strings.TrimSpace(msgs[i].Text())
		}
	}
	return ""
}

func behaviour(text string) string {
	for _, b := range Behaviours {
		if strings.HasPrefix(text, b) {
			return b
		}
	}
	return ""
}

func (x *turn) start(text string) error {
	switch b := behaviour(text); b {
	case "tck-complete-task", "":
		return x.answer("Task completed: " + text)
	case "tck-input-required", "tck-multi-turn":
		return x.ask(b, "Please provide more input to continue ("+b+").")
	case "tck-auth-required":
		return x.ask(b, "Please provide credentials to continue (tck-auth-required).")
	case "tck-reject-task":
		return errdefs.Validationf("task rejected by the conformance agent (%s)", b)
	case "tck-task-failure":
		return errdefs.Internal(errors.New("simulated failure (tck-task-failure)"))
	case "tck-message-response":
		if err := x.answer("Direct message response"); err != nil {
			return err
		}
		// The answer is a Message, not a Task (A2A faces read the kind).
		msgs := x.board.Channel(engine.MainChannel)
		m := msgs[len(msgs)-1]
		m.Metadata = map[string]any{model.MetaResponseKind: "message"}
		x.board.SetChannel(engine.MainChannel, append(msgs[:len(msgs)-1:len(msgs)-1], m))
		return nil
	case "tck-artifact-text":
		return x.artifact("text-artifact", model.TextPart("Generated text content"), true)
	case "tck-artifact-file":
		return x.artifact("file-artifact", model.FileBytesPart("output.txt", "text/plain", []byte("file content")), true)
	case "tck-artifact-file-url":
		return x.artifact("file-url-artifact", model.FileURLPart("output.txt", "text/plain", "https://example.com/output.txt"), true)
	case "tck-artifact-data":
		p, _ := model.DataPart(map[string]any{"key": "value", "count": 42})
		return x.artifact("data-artifact", p, true)
	case "tck-stream-basic":
		if err := x.wait(StreamPace); err != nil {
			return err
		}
		if err := x.artifact("stream-artifact", model.TextPart("Streamed content"), true); err != nil {
			return err
		}
		if err := x.wait(StreamPace); err != nil {
			return err
		}
		return x.answer("Stream completed")
	case "tck-stream-chunked":
		return x.chunked()
	case "tck-long-running":
		if err := x.wait(x.e.delay); err != nil {
			return err
		}
		if err := x.artifact("long-running-artifact", model.TextPart("Long-running result"), true); err != nil {
			return err
		}
		return x.answer("Long-running task completed")
	case "tck-cancel":
		return x.wait(0)
	}
	return x.answer("Task completed: " + text)
}

// resume continues after the user answered the question of behaviour b:
// tck-multi-turn asks again until an answer contains "done";
// tck-auth-required takes any non-empty answer as the credentials.
func (x *turn) resume(b string) error {
	reply, err := x.host.AskUser(x.ctx, engine.UserPrompt{Parts: []model.Part{model.TextPart("(resumed)")}, Source: x.e.agentID + ":" + b})
	if err != nil {
		return err
	}
	text := strings.TrimSpace(reply.Text())
	switch {
	case b == "tck-multi-turn" && !strings.Contains(strings.ToLower(text), "done"):
		return x.ask(b, "Received: "+text+". Please provide more input, or say done (tck-multi-turn).")
	case b == "tck-auth-required" && text == "" && len(reply.Parts) == 0:
		return x.ask(b, "No credentials received; please provide credentials (tck-auth-required).")
	}
	return x.answer("Received: " + text)
}

// ask checkpoints, then asks the user; the host parks the run until the
// answer arrives and resume picks up from the checkpoint.
func (x *turn) ask(b, question string) error {
	cp := engine.Checkpoint{
		ExecID: x.run.ID, Step: "ask:" + b, Board: x.board.Snapshot(), Timestamp: time.Now().UTC(),
		Attributes: x.run.Attributes,
	}
	if err := x.host.Checkpoint(x.ctx, cp); err != nil {
		return err
	}
	prompt := engine.UserPrompt{Parts: []model.Part{model.TextPart(question)}, Source: x.e.agentID + ":" + b, Auth: b == "tck-auth-required"}
	reply, err := x.host.AskUser(x.ctx, prompt)
	if err != nil {
		return err
	}
	return x.answer("Received: " + reply.Text())
}

// answer streams text as token deltas and appends it as the answer.
func (x *turn) answer(text string) error {
	words := strings.SplitAfter(text, " ")
	for _, w := range words {
		if err := x.interrupted(); err != nil {
			return err
		}
		if err := x.host.Publish(x.ctx, engine.Token{Actor: x.e.agentID, Text: w}); err != nil {
			return err
		}
	}
	x.board.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, text))
	return nil
}

func (x *turn) artifact(name string, p model.Part, last bool) error {
	a := model.Artifact{ID: x.run.ID + "-" + name, Name: name, Parts: []model.Part{p}}
	return x.host.Publish(x.ctx, engine.ArtifactUpdate{Artifact: a, LastChunk: last})
}

func (x *turn) chunked() error {
	const chunks = 4
	id := x.run.ID + "-chunked-artifact"
	for i := 1; i <= chunks; i++ {
		if err := x.interrupted(); err != nil {
			return err
		}
		a := model.Artifact{ID: id, Name: "chunked-artifact", Parts: []model.Part{model.TextPart("chunk " + strconv.Itoa(i) + " ")}}
		if err := x.host.Publish(x.ctx, engine.ArtifactUpdate{Artifact: a, Append: i > 1, LastChunk: i == chunks}); err != nil {
			return err
		}
	}
	return x.answer("Chunked stream completed")
}

// wait works for d (forever when d is 0) unless interrupted or canceled.
func (x *turn) wait(d time.Duration) error {
	var timer <-chan time.Time
	if d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		timer = t.C
	}
	select {
	case intr, ok := <-x.host.Interrupts():
		if ok {
			return engine.Interrupted(intr)
		}
		<-x.ctx.Done()
		return x.ctx.Err()
	case <-x.ctx.Done():
		return x.ctx.Err()
	case <-timer:
		return nil
	}
}

func (x *turn) interrupted() error {
	select {
	case intr, ok := <-x.host.Interrupts():
		if ok {
			return engine.Interrupted(intr)
		}
	case <-x.ctx.Done():
		return x.ctx.Err()
	default:
	}
	return nil
}
