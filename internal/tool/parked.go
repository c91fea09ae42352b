package tool

import "context"

// ParkedCanceler is an optional interface of a Tool whose call may park
// the run — a peer agent called as a tool asks the user a question — and
// leave something waiting elsewhere (the peer's task). When the parked run
// is canceled, the engine calls CancelParked for each such pending call,
// with ctx carrying the call (CallFromContext), the host and the run id as
// for Execute: it cancels what the call left waiting, and starts nothing.
type ParkedCanceler interface {
	CancelParked(ctx context.Context) error
}
