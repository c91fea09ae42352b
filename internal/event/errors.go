package event

import (
	"errors"

	"agentd/internal/errdefs"
)

// Errors a Bus reports. Both are classified Aborted: the bus gave up on the
// work, retrying the same call will not help, and the caller's next move is
// to shut down (ErrBusClosed) or catch up from the event log (ErrDetached).
var (
	// ErrBusClosed is returned by Publish and Subscribe after Close, and by
	// Subscription.Err for subscriptions the closing bus ended.
	ErrBusClosed = errdefs.Aborted(errors.New("event: bus closed"))
	// ErrDetached is wrapped, with the subject and buffer size at fault, by
	// Subscription.Err after an OverflowDetach subscription fell behind.
	ErrDetached = errdefs.Aborted(errors.New("event: subscription detached: buffer full"))
)
