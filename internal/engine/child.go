package engine

import "context"

// ChildRunner is an optional capability of a Host, found by type
// assertion: it runs part of an engine's work — a workflow step — as a
// child run of the host's run, with an identity, a transcript, an event
// log and checkpoints of its own. Engines without it at hand run the
// child's engine in-process under a host of their own.
//
// RunChild executes eng on board as the child named by c.Key and returns
// what Engine.Execute returns. The runner assigns the child's run id and
// keeps it stable for a key: asked again for a key whose child did not
// finish (the parent resumed after a crash, a drain or an input), it
// resumes that child from the child's own latest checkpoint; asked for a
// key whose child completed, it returns the child's final board without
// running anything; asked for one whose child failed or was canceled, it
// starts a new child. Every event the child publishes also goes to
// c.Host, which nests it in the
// parent's events; the child receives interrupts from c.Host, asks the
// user through it and reports usage to it.
type ChildRunner interface {
	RunChild(ctx context.Context, c ChildRun, eng Engine, board *Board) (*Board, error)
}

// ChildRun describes a child run to ChildRunner.
type ChildRun struct {
	// Key names the child among its parent's children, stably across the
	// parent's attempts (a workflow uses the step's namespaced id and the
	// step's attempt).
	Key string
	// Step is the parent's step the child runs, recorded with the child
	// (task metadata MetaParentStep).
	Step string
	// Run is the child's run: Attributes, Deps and ParentRunID as the
	// caller wants them; the runner sets ID and ResumeFrom.
	Run Run
	// Host is the parent's side of the child: see ChildRunner.
	Host Host
	// AgentID is the agent the child's task belongs to (empty: the
	// parent's agent), e.g. the local target of a hand-off.
	AgentID string
	// Cancel asks the runner to cancel the key's child rather than run
	// it: an unfinished child resumes with SignalCancel, so that its
	// engine cancels what it left waiting (a peer task) and ends; a
	// finished or missing one is left as it is, and nothing new starts.
	Cancel bool
}

// The task metadata keys of a child run.
const (
	MetaParentRunID = "parent_run_id"
	MetaParentStep  = "parent_step"
)
