package run

import (
	"time"

	"agentd/internal/model"
)

// TaskState is a run's lifecycle state, named as in A2A (kebab-case).
type TaskState string

// The states of a task.
const (
	StateSubmitted     TaskState = "submitted"
	StateWorking       TaskState = "working"
	StateInputRequired TaskState = "input-required"
	StateAuthRequired  TaskState = "auth-required"
	StateCompleted     TaskState = "completed"
	StateFailed        TaskState = "failed"
	StateCanceled      TaskState = "canceled"
	StateRejected      TaskState = "rejected"
)

// Terminal reports whether no further transition is possible.
func (s TaskState) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// Interrupted reports whether the task waits for the user.
func (s TaskState) Interrupted() bool {
	return s == StateInputRequired || s == StateAuthRequired
}

// Valid reports whether s is a known state.
func (s TaskState) Valid() bool {
	switch s {
	case StateSubmitted, StateWorking, StateInputRequired, StateAuthRequired,
		StateCompleted, StateFailed, StateCanceled, StateRejected:
		return true
	}
	return false
}

// Task is one run of one agent in one context (the A2A task).
type Task struct {
	ID        string `json:"id"`
	ContextID string `json:"context_id"`
	AgentID   string `json:"agent_id"`
	// Tenant is set by the store from the context on create.
	Tenant string    `json:"tenant,omitempty"`
	State  TaskState `json:"state"`
	// StatusMessage accompanies the current state (the question of an
	// input-required state, the reason of a failure).
	StatusMessage *model.Message `json:"status_message,omitempty"`
	// Error is a machine-readable failure: class and message.
	Error     *TaskError       `json:"error,omitempty"`
	Artifacts []model.Artifact `json:"artifacts,omitempty"`
	Usage     model.TokenUsage `json:"usage"`
	// ModelUsage splits Usage by the name of the model called ("" for an
	// agent whose configuration names none), so that the run can be
	// priced. nil when no model was called.
	ModelUsage map[string]model.TokenUsage `json:"model_usage,omitempty"`
	// Attempt counts engine executions (1 on the first).
	Attempt int `json:"attempt"`
	// CancelRequested records a cancel so that the replica owning the run
	// can react to it.
	CancelRequested bool `json:"cancel_requested,omitempty"`
	// Signals are the pause and feedback signals recorded for the replica
	// executing the run (by whichever replica took them), oldest first,
	// until it acts on them; see PendingSignal.
	Signals  []PendingSignal `json:"signals,omitempty"`
	Metadata map[string]any  `json:"metadata,omitempty"`
	// Version is the optimistic-concurrency token; the store sets it (1 on
	// create) and bumps it on every update.
	Version   int64     `json:"version"`
	CreatedAt time.Time `json:"created_at"`
	UpdatedAt time.Time `json:"updated_at"`
}

// PendingSignal is a signal recorded on a task for the replica that
// executes the run: any replica may take a signal, and the owner learns
// of it in its next lease renewal round (a store's RenewedLease), like a
// cancel. The owner removes it (a versioned task update) once it acted on
// it — a feedback once a checkpoint holds it — so that a signal reaches
// the run exactly once, and one its owner did not act on before it died
// reaches the next attempt.
type PendingSignal struct {
	// ID names the signal; a feedback's message carries it as its id.
	ID string `json:"id"`
	// Type is "pause" or "feedback".
	Type string `json:"type"`
	// Text is the feedback, or the pause's note.
	Text string    `json:"text,omitempty"`
	At   time.Time `json:"at"`
}

// TaskError explains a failed or rejected task.
type TaskError struct {
	Class   string `json:"class"`
	Message string `json:"message"`
}

// TaskQuery selects tasks, newest first (by creation).
type TaskQuery struct {
	ContextID string
	AgentID   string
	States    []TaskState
	// UpdatedAfter, when set, keeps tasks updated strictly after it.
	UpdatedAfter time.Time
	// Cursor continues a previous page; empty starts at the newest.
	Cursor string
	// Limit bounds the page (default 50, at most 100).
	Limit int
}

// TaskPage is one page of tasks.
type TaskPage struct {
	Tasks []Task
	// NextCursor continues the listing; empty on the last page.
	NextCursor string
	// Total counts every task the query matches (all pages).
	Total int
}
