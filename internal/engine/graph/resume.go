package graph

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// Resuming a finished step (zenflow's Executor.ResumeStep): a message to
// a step that completed resumes it from its transcript — a child run of
// the step's agent keyed "<step>/resume#<n>", whose board is the step's
// conversation, and which reads the waiting messages as its next user
// turn. Its answer is the reply the sender's tool call returns; the
// step's own result stays what it was. Resumes of one step run one at a
// time; each is framed by resume_started and resume_completed (or
// resume_failed) notes.

// resumeLocks serialises the resumes of each step.
type resumeLocks struct {
	mu    sync.Mutex
	steps map[string]*sync.Mutex
}

func (l *resumeLocks) of(step string) *sync.Mutex {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.steps == nil {
		l.steps = map[string]*sync.Mutex{}
	}
	if l.steps[step] == nil {
		l.steps[step] = &sync.Mutex{}
	}
	return l.steps[step]
}

// resumable reports whether step completed with a transcript to resume
// from. x.mu is held.
func (x *execution) resumable(step string) bool {
	r, ok := x.st.Results[step]
	return ok && r.Status == StepCompleted && x.st.Mail.Transcripts[step] != nil
}

// errResuming: the step is being resumed already (by a message whose
// answer is on the way); it reads the new message before its next model
// turn, and the sender gets no reply of its own.
var errResuming = errors.New("the step is answering another message; it reads this one before its next turn")

// replyTo resumes step, which completed, to answer message m, and returns
// its answer. A reply recorded before (a replayed send) is returned as is.
// A step being resumed already is not waited for (errResuming): steps
// that message each other while resumed would wait on each other forever.
func (x *execution) replyTo(ctx context.Context, step string, m Message) (string, error) {
	lock := x.resumes.of(step)
	if !lock.TryLock() {
		return "", errResuming
	}
	defer lock.Unlock()
	x.mu.Lock()
	reply, done := x.st.Mail.Replies[m.ID]
	transcript := slices.Clone(x.st.Mail.Transcripts[step])
	n := x.st.Mail.Resumes[step] + 1
	x.mu.Unlock()
	if done {
		return reply, nil
	}
	s := x.e.step(step)
	if s == nil || transcript == nil {
		return "", errdefs.Validationf("step %q cannot be resumed: it kept no conversation", step)
	}
	resumeID := step + "/resume#" + strconv.Itoa(n)
	x.note(step, "resume_started", map[string]any{"step": step, "resume_id": resumeID, "from": m.From, "message_id": m.ID})
	board := engine.NewBoard()
	board.SetChannel(engine.MainChannel, transcript)
	out, err := x.runOn(ctx, x.e.engines[agentKey{s.Agent, s.Model}], step, s.Agent, resumeID, board)
	if err != nil {
		x.note(step, "resume_failed", map[string]any{"step": step, "resume_id": resumeID, "error": err.Error()})
		if isStop(err) {
			return "", x.stopOr(err)
		}
		return "", fmt.Errorf("resume of step %q: %w", step, err)
	}
	msgs := out.Channel(engine.MainChannel)
	reply = contentOf(msgs[min(len(transcript), len(msgs)):])
	x.mu.Lock()
	if x.st.Mail.Replies == nil {
		x.st.Mail.Replies = map[string]string{}
		x.st.Mail.Resumes = map[string]int{}
	}
	x.st.Mail.Replies[m.ID] = reply
	x.st.Mail.Resumes[step] = n
	x.st.Mail.Transcripts[step] = msgs
	x.mu.Unlock()
	if err := x.checkpoint(checkpointMailPrefix + step); err != nil {
		return "", err
	}
	x.note(step, "resume_completed", map[string]any{"step": step, "resume_id": resumeID, "reply": reply})
	return reply, nil
}

// keepTranscript records a completed agent step's conversation, which a
// later message resumes it from (only when the workflow has messaging).
func (x *execution) keepTranscript(step string, msgs []model.Message) {
	if !x.e.messaging() || x.e.step(step) == nil {
		return
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.st.Mail.Transcripts == nil {
		x.st.Mail.Transcripts = map[string][]model.Message{}
	}
	x.st.Mail.Transcripts[step] = msgs
}
