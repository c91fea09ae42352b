package store

import "agentd/internal/run"

// The run vocabulary lives in package run. These aliases keep code
// written against store's older words compiling while it moves over
// (core-rename.sh rewrites it); nothing in this branch uses them.
type (
	Task          = run.Task
	TaskState     = run.TaskState
	PendingSignal = run.PendingSignal
	TaskError     = run.TaskError
	Message       = run.Message
	Event         = run.Event
	TaskQuery     = run.TaskQuery
	TaskPage      = run.TaskPage
	MessageQuery  = run.MessageQuery
	MessagePage   = run.MessagePage
	EventPage     = run.EventPage
	PushConfig    = run.PushConfig
	PushClaim     = run.PushClaim
)

// The task states, as in package run.
const (
	StateSubmitted     = run.StateSubmitted
	StateWorking       = run.StateWorking
	StateInputRequired = run.StateInputRequired
	StateAuthRequired  = run.StateAuthRequired
	StateCompleted     = run.StateCompleted
	StateFailed        = run.StateFailed
	StateCanceled      = run.StateCanceled
	StateRejected      = run.StateRejected
	DefaultTenant      = run.DefaultTenant
)

// WithTenant and TenantFrom are run's.
var (
	WithTenant = run.WithTenant
	TenantFrom = run.TenantFrom
)
