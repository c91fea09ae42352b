package remote

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
)

// agentd's resumable-stream extension, as its A2A face declares it
// (internal/a2a/extension.go; engines must not import the HTTP layer, a
// test keeps the two in step): updates carry their seq in metadata under
// MetaSeq, and SubscribeToTask with the Last-Event-ID service parameter
// replays exactly the updates after it.
const (
	ExtensionURI      = "https://agentd.dev/a2a/ext/resumable-stream/v1"
	MetaSeq           = ExtensionURI + "#seq"
	LastEventIDHeader = "Last-Event-ID"
)

// reattach subscribes to the known peer task again. With a peer that
// declares the extension it asks for the updates after the last seq
// forwarded, so each is forwarded exactly once. Without it the Task
// snapshot that opens the subscription is compared with what was
// forwarded (catchUp). A task that already ended cannot be subscribed
// to; its final state is read with GetTask instead.
func (x *attempt) reattach(ctx context.Context) stream {
	req := &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(x.st.TaskID)}
	sub := ctx
	if x.peer.resumable {
		sub = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{LastEventIDHeader: {strconv.FormatInt(x.st.Seq, 10)}})
	}
	events := x.peer.client.SubscribeToTask(sub, req)
	return func(yield func(a2a.Event, error) bool) {
		x.snapshot = !x.peer.resumable
		first := true
		var settled *a2a.Task
		for ev, err := range events {
			if err != nil && first {
				x.fromTask(ctx, err, yield)
				return
			}
			if t, ok := ev.(*a2a.Task); ok && first && x.peer.resumable && !active(t.Status.State) {
				// The snapshot is newer than the cursor: the replay that
				// follows must be forwarded before its state is acted on.
				settled, ev = t, &a2a.Task{ID: t.ID, ContextID: t.ContextID, Status: a2a.TaskStatus{State: a2a.TaskStateWorking}}
			}
			first = false
			if u, ok := ev.(*a2a.TaskStatusUpdateEvent); ok && settled != nil && asks(u.Status.State) {
				continue // a question of the past: the snapshot says the task moved on
			}
			if !yield(ev, err) {
				return
			}
		}
		if settled != nil {
			// The replay ended without the update that settled the task
			// (pruned, or not sent): finish from the snapshot's text.
			x.snapshot = true
			yield(settled, nil)
		}
	}
}

func asks(s a2a.TaskState) bool {
	return s == a2a.TaskStateInputRequired || s == a2a.TaskStateAuthRequired
}

// active reports whether a peer task in state s is still producing.
func active(s a2a.TaskState) bool {
	return s == a2a.TaskStateWorking || s == a2a.TaskStateSubmitted
}

// fromTask ends a re-attachment the peer refused (the task ended in the
// meantime): the Task from GetTask is compared with what was forwarded.
func (x *attempt) fromTask(ctx context.Context, subErr error, yield func(a2a.Event, error) bool) {
	call, cancel := context.WithTimeout(ctx, x.e.cfg.Timeout)
	defer cancel()
	t, err := x.peer.client.GetTask(call, &a2a.GetTaskRequest{ID: a2a.TaskID(x.st.TaskID)})
	if err != nil {
		yield(nil, errors.Join(subErr, err))
		return
	}
	x.snapshot = true
	yield(t, nil)
}

// catchUp forwards the answer text the peer's Task holds beyond what the
// checkpoint says was forwarded. The Task's text-only artifacts, in
// order, are the peer's answers; if what was forwarded is not a prefix of
// them (the peer rewrote an answer) nothing is forwarded twice: only what
// lies past the forwarded length is.
func (x *attempt) catchUp(t *a2a.Task) error {
	var all strings.Builder
	for _, a := range t.Artifacts {
		if a == nil {
			continue
		}
		if text, ok := textOnly(a.Parts); ok {
			all.WriteString(text)
		}
	}
	if s := all.String(); len(s) > len(x.st.Text) {
		return x.token(s[len(x.st.Text):])
	}
	return nil
}

// noteSeq records the seq an update carries (peers with the extension).
func (x *attempt) noteSeq(meta map[string]any) {
	if !x.peer.resumable {
		return
	}
	var n int64
	switch v := meta[MetaSeq].(type) {
	case float64:
		n = int64(v)
	case int64:
		n = v
	case json.Number:
		n, _ = v.Int64()
	case string:
		n, _ = strconv.ParseInt(v, 10, 64)
	}
	if n > x.st.Seq {
		x.st.Seq = n
	}
}

// cancelPeer forwards a user's cancel to the peer task, bounded by the
// peer timeout and detached from the run's context, which may be ending.
func (x *attempt) cancelPeer() {
	if x.st.TaskID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(x.ctx), x.e.cfg.Timeout)
	defer cancel()
	_, err := x.peer.client.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(x.st.TaskID)})
	x.e.breaker.record(classifyCall(ctx, "cancel", err))
}
