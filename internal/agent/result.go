package agent

import (
	"agentd/internal/engine"
	"agentd/internal/model"
)

// Status is the terminal classification of one turn. Its values are
// spelled like A2A task states so they cross the protocol unchanged; Run
// never uses it for control flow.
type Status string

// The outcomes of a turn.
const (
	// StatusCompleted: Execute returned without error.
	StatusCompleted Status = "completed"
	// StatusInterrupted: the engine honoured a cooperative interrupt (its
	// error is in errdefs.ClassInterrupted). Result.Cause says why, whatever
	// the cause — a user_cancel interrupt is interrupted, not canceled;
	// hosts that report it to A2A as "canceled" branch on Result.Cause.
	StatusInterrupted Status = "interrupted"
	// StatusCanceled: ctx was canceled (context.Canceled) before the engine
	// finished, the hard form of cancel. A passed deadline is a failure
	// classified errdefs.ClassTimeout, not a cancel.
	StatusCanceled Status = "canceled"
	// StatusAborted: the engine reported an errdefs.ClassAborted error, an
	// unrecoverable halt, so callers may apply a different retry policy
	// than for StatusFailed.
	StatusAborted Status = "aborted"
	// StatusFailed: any other engine error (including a recovered engine
	// panic, classified errdefs.ClassInternal).
	StatusFailed Status = "failed"
)

// FinalizeReasonStateKey is the Result.State key under which Run records
// the first non-empty FinalizeDecision.Reason. Run owns it: a decider's
// State entry under this key is overwritten.
const FinalizeReasonStateKey = "finalize_reason"

// Result is what one turn produced. Run returns it for every business
// outcome; branch on Status.
type Result struct {
	// TaskID echoes Request.TaskID.
	TaskID string `json:"taskId,omitempty"`
	// ContextID echoes Request.ContextID.
	ContextID string `json:"contextId,omitempty"`
	// RunID is the execution id Run used (engine.Run.ID).
	RunID string `json:"runId,omitempty"`
	// Status classifies the outcome.
	Status Status `json:"status"`
	// Cause is the interrupt cause when Status is StatusInterrupted and the
	// engine returned an engine.InterruptedError; empty otherwise.
	Cause engine.Cause `json:"cause,omitempty"`
	// CauseDetail is the interrupt's Detail, e.g. the meaning of a custom
	// cause.
	CauseDetail string `json:"causeDetail,omitempty"`
	// Messages are the messages this turn produced, in board order, and
	// nothing else: not the request's message, not the history a seeder
	// loaded. Run records the length of the main channel of the board the
	// engine starts from — the seeded board, or on a resumed attempt the
	// board restored from the checkpoint — and Messages is the final
	// board's main channel beyond that length. Engines therefore only ever
	// append to engine.MainChannel during a turn (compaction works on an
	// engine-private view); a final main channel shorter than the start
	// yields no messages. They are shared with LastBoard's main channel
	// (appending to Messages copies, the board is never written through
	// it): treat them as immutable.
	Messages []model.Message `json:"messages,omitempty"`
	// Committed says whether the output should be persisted (transcript
	// append, archival). It defaults to true for StatusCompleted and false
	// otherwise; any Decider returning DiscardOutput forces false, and a
	// failing Decider leaves it false. Observers that persist check it
	// first. It is policy, not content: Messages always hold the output.
	Committed bool `json:"committed"`
	// State carries run metadata: the merged FinalizeDecision.State entries
	// and FinalizeReasonStateKey. Never nil on a Result from Run.
	State map[string]any `json:"state,omitempty"`
	// Err is the engine's error when Status is not StatusCompleted, as the
	// engine returned it; errdefs.ClassOf(Err) classifies it (unclassified
	// errors count as Internal, context.Canceled as Aborted).
	Err error `json:"-"`
	// LastBoard is the board the engine finished with (partial when the
	// run did not complete). Run does not persist it.
	LastBoard *engine.Board `json:"-"`
	// Attempts counts the engine.Execute calls Run made: 1 unless the
	// revise loop ran (WithMaxRevise). Zero only on a Result that never
	// reached Execute.
	Attempts int `json:"attempts,omitempty"`
}
