package a2a_test

import (
	"context"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	agenta2a "agentd/internal/a2a"
)

// A client retries a streaming send (same messageId, same context) after
// the task moved on: the stream shows the task as it is now — for a
// completed task the Task alone — and never replays the submission's old
// updates, which would contradict that Task.
func TestRetriedStreamingSendShowsTheTaskAsItIsNow(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	first := textMessage("tck-multi-turn")
	task := taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: first}))
	if task.Status.State != a2a.TaskStateInputRequired {
		t.Fatalf("first turn: %s, want input-required", task.Status.State)
	}
	follow := textMessage("done, the answer")
	follow.TaskID, follow.ContextID = task.ID, task.ContextID
	if done := taskOf(t, mustSend(t, c, &a2a.SendMessageRequest{Message: follow})); done.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("second turn: %s, want completed", done.Status.State)
	}
	retry := *first
	retry.ContextID = task.ContextID
	evs := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: &retry}))
	snap, ok := evs[0].(*a2a.Task)
	if !ok || snap.ID != task.ID || snap.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("retried stream opens with %T %+v, want task %s completed", evs[0], evs[0], task.ID)
	}
	for _, ev := range evs[1:] {
		t.Errorf("retried stream of a completed task sent %s after the Task", describe(ev))
	}
}

// A streaming send retried while its task still runs joins it live: the
// Task, then updates after the retry only, the open answer announced to
// this client under the id every other stream uses, up to the end.
func TestRetriedStreamingSendJoinsARunningTask(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	msg := textMessage("stream 60 every 5ms")
	var task *a2a.Task
	ctx, cancel := context.WithCancel(ctxT(t))
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatal(err)
		}
		if tk, ok := ev.(*a2a.Task); ok {
			task = tk
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			break // the answer is open
		}
	}
	cancel()
	retry := *msg
	retry.ContextID = task.ContextID
	evs := collect(t, c.SendStreamingMessage(ctxT(t), &a2a.SendMessageRequest{Message: &retry}))
	if snap, ok := evs[0].(*a2a.Task); !ok || snap.ID != task.ID {
		t.Fatalf("retried stream opens with %T, want task %s", evs[0], task.ID)
	}
	last, ok := evs[len(evs)-1].(*a2a.TaskStatusUpdateEvent)
	if !ok || last.Status.State != a2a.TaskStateCompleted {
		t.Fatalf("retried stream ends with %s, want the completed status", describe(evs[len(evs)-1]))
	}
	wantJoinedView(t, evs, replay(t, c, task.ID, 0))
}

// A subscriber that joins mid-answer (no cursor) is not told to append to
// an artifact it was never sent: its first chunk of the open answer
// announces it, under the id an unbroken stream uses.
func TestSubscriberJoiningMidAnswerGetsTheArtifactAnnounced(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 100 every 5ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true}
	task := taskOf(t, mustSend(t, c, req))
	// The answer is open once a first subscriber sees its first chunk.
	for ev, err := range c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: task.ID}) {
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			break
		}
	}
	evs := collect(t, c.SubscribeToTask(ctxT(t), &a2a.SubscribeToTaskRequest{ID: task.ID}))
	wantJoinedView(t, evs, replay(t, c, task.ID, 0))
}

// wantJoinedView checks a stream that joined a task (evs, opening with the
// Task) against the unbroken stream's updates (ref, from describe): every
// artifact's first update announces it, and each update is the unbroken
// stream's update of the same seq but for that first append flag.
func wantJoinedView(t *testing.T, evs []a2a.Event, ref []string) {
	t.Helper()
	bySeq := map[int64]string{}
	for _, r := range ref {
		var seq int64
		for _, ch := range r {
			if ch < '0' || ch > '9' {
				break
			}
			seq = seq*10 + int64(ch-'0')
		}
		bySeq[seq] = r
	}
	known := map[a2a.ArtifactID]bool{}
	for _, a := range evs[0].(*a2a.Task).Artifacts {
		known[a.ID] = true
	}
	updates := 0
	for _, ev := range evs[1:] {
		want := bySeq[seqOf(ev)]
		if up, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok {
			if !known[up.Artifact.ID] {
				if up.Append {
					t.Fatalf("first update of artifact %s says append:true; this client never got the artifact", up.Artifact.ID)
				}
				// The unbroken stream may have announced it earlier.
				up.Append = strings.Contains(want, " append=true ")
			}
			known[up.Artifact.ID] = true
		}
		if got := describe(ev); got != want {
			t.Errorf("joined stream sent %q; the unbroken stream's update of that seq is %q", got, want)
		}
		updates++
	}
	if updates == 0 {
		t.Fatal("the joined stream sent no update after the Task")
	}
}

// Resuming a finished task across pruned events: the gap marker says
// WORKING while updates follow it, and carries the task's final state only
// when it is the stream's last update (everything through the run's end was
// pruned).
func TestGapMarkerClaimsAFinalStateOnlyWhenLast(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	for _, tc := range []struct {
		name      string
		pruneTail int64 // prune through last seq - pruneTail
		wantLast  a2a.TaskState
	}{
		{"events follow the gap", 10, a2a.TaskStateCompleted},
		{"the gap is the end", 0, a2a.TaskStateCompleted},
	} {
		t.Run(tc.name, func(t *testing.T) {
			task := taskOf(t, mustSend(t, c, sendReq("stream 20")))
			page, err := e.rt.ReadEvents(ctxT(t), string(task.ID), 1<<62, 1)
			if err != nil {
				t.Fatal(err)
			}
			if err := e.st.PruneEvents(ctxT(t), string(task.ID), page.LastSeq-tc.pruneTail); err != nil {
				t.Fatal(err)
			}
			ctx := a2aclient.AttachServiceParams(ctxT(t), a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {"5"}})
			evs := collect(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: task.ID}))[1:]
			gap, ok := evs[0].(*a2a.TaskStatusUpdateEvent)
			if !ok || gap.Metadata[agenta2a.MetaGap] == nil {
				t.Fatalf("first update %s, want the gap marker", describe(evs[0]))
			}
			for i, ev := range evs {
				su, ok := ev.(*a2a.TaskStatusUpdateEvent)
				if !ok {
					continue
				}
				if i < len(evs)-1 && su.Status.State != a2a.TaskStateWorking {
					t.Errorf("update %d of %d (%s) says %s, yet updates follow it", i+1, len(evs), describe(ev), su.Status.State)
				}
				if i == len(evs)-1 && su.Status.State != tc.wantLast {
					t.Errorf("last update %s, want state %s", describe(ev), tc.wantLast)
				}
			}
		})
	}
}
