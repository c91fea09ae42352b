package flow_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/event"
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
	board, err := execute(t, eng, run, userBoard(text), h)
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
		board, err = execute(t, eng, run, engine.NewBoard(), h)
	}
	return board, used, err
}

// trail renders a run's events one per line, for golden files: run
// frames, steps with their node (and tool), deltas and artifacts.
func trail(envs []event.Envelope) string {
	var b strings.Builder
	for _, env := range envs {
		s := string(env.Subject)
		rest := s[strings.Index(s, "."+engine.SanitiseID(env.RunID)+".")+len(engine.SanitiseID(env.RunID))+2:]
		switch {
		case rest == "start" || rest == "end":
			var p struct {
				Status string `json:"status"`
				Cause  string `json:"cause"`
				Resume string `json:"resume_step"`
			}
			_ = json.Unmarshal(env.Payload, &p)
			fmt.Fprintf(&b, "run.%s %s%s%s\n", rest, p.Status, p.Cause, p.Resume)
		case rest == "artifact":
			var p engine.ArtifactPayload
			_ = json.Unmarshal(env.Payload, &p)
			fmt.Fprintf(&b, "artifact %s %s\n", p.Artifact.ID, p.Artifact.Parts[0].Data)
		case strings.HasPrefix(rest, "step."):
			var p engine.StepPayload
			_ = json.Unmarshal(env.Payload, &p)
			verb := rest[strings.LastIndexByte(rest, '.')+1:]
			fmt.Fprintf(&b, "step.%s %s %s", verb, p.Kind, p.Detail)
			if p.Error != "" {
				fmt.Fprintf(&b, " error=%q", p.Error)
			}
			b.WriteByte('\n')
		case strings.HasPrefix(rest, "stream."):
			d, _ := engine.DecodeStreamDelta(env)
			switch d.Type {
			case engine.StreamDeltaToken:
				fmt.Fprintf(&b, "say %q\n", d.Content)
			case engine.StreamDeltaToolCall:
				a, _ := json.Marshal(d.Arguments)
				fmt.Fprintf(&b, "call %s %s %s\n", d.Name, d.ID, a)
			case engine.StreamDeltaToolResult:
				fmt.Fprintf(&b, "result %s error=%v %s\n", d.Name, d.IsError, d.Content)
			}
		}
	}
	return b.String()
}
