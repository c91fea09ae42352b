package main

// The process-level test of push notifications: a real webhook receiver on
// loopback that fails the first deliveries, two replicas on one
// PostgreSQL, and the replica running the task SIGKILLed mid-run.

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"sigs.k8s.io/yaml"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/a2a/pushtest"
)

// TestPushSurvivesReplicaKill: a task on A streams with a webhook that
// answers 503 twice, then holds a request past the delivery timeout; A is
// SIGKILLed while it delivers. B resumes the run and, once A's claim
// expired, the delivery from its durable cursor: the webhook ends up with
// every update of the task at least once, in order, exactly as a stream
// from the start carries them — and the webhook of another task, running
// on B meanwhile, with that task's updates only.
func TestPushSurvivesReplicaKill(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writePushConfig(t, map[string]any{"lease_ttl": "2s"},
		map[string]any{"allow_private": true, "timeout": "500ms", "claim_ttl": "2s", "retry_for": "1m"})
	rcv := pushtest.NewReceiver()
	defer rcv.Close()
	rcv.FailNext(pushtest.Fault{Status: 503}, pushtest.Fault{Status: 502}, pushtest.Fault{Hold: 1500 * time.Millisecond})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	ca, cb := a2aClient(t, a), a2aClient(t, b)

	other := sendWithWebhook(ctx, t, cb, "stream 40 every 20ms", rcv.URL("/other"))
	main := sendWithWebhook(ctx, t, ca, streamRun, rcv.URL("/main"))
	if err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(pushtest.Seqs(at(ns, "/main"))) >= 15 }); err != nil {
		t.Fatalf("webhook /main got %d updates before the kill: %v", len(at(rcv.Notifications(), "/main")), err)
	}
	a.signal(syscall.SIGKILL)
	killedAt := time.Now()
	_ = a.waitExit(t, testTimeout)
	before := len(at(rcv.Notifications(), "/main"))

	for _, id := range []a2a.TaskID{main, other} {
		waitTaskTerminal(ctx, t, cb, id)
	}
	for path, id := range map[string]a2a.TaskID{"/main": main, "/other": other} {
		want := replayAll(ctx, t, cb, id)
		err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(pushtest.Seqs(at(ns, path))) >= len(want) })
		got := at(rcv.Notifications(), path)
		if err != nil {
			t.Fatalf("webhook %s: %d distinct updates, want %d: %v", path, len(pushtest.Seqs(got)), len(want), err)
		}
		if !pushtest.InOrder(got) {
			t.Errorf("webhook %s: updates out of order: %v", path, seqsIn(got))
		}
		if d := describeOnce(got); !slices.Equal(d, want) {
			t.Errorf("webhook %s got:\n%s\nwant (a stream of the task from the start):\n%s", path, strings.Join(d, "\n"), strings.Join(want, "\n"))
		}
		for _, n := range got {
			if n.TaskID != string(id) {
				t.Errorf("webhook %s got an update of task %s, want only %s's", path, n.TaskID, id)
			}
		}
		t.Logf("webhook %s: %d notifications, %d distinct updates", path, len(got), len(want))
	}
	resumed := at(rcv.Notifications(), "/main")[before:]
	if len(resumed) > 0 {
		t.Logf("first delivery after the kill %v later (claim TTL 2s); %d requests met a fault", resumed[0].Received.Sub(killedAt), rcv.Failed())
	}
	if rcv.Failed() != 3 {
		t.Errorf("faults met: %d, want 3", rcv.Failed())
	}
}

// writePushConfig writes the demo configuration with server settings and
// a push section.
func writePushConfig(t *testing.T, server, push map[string]any) string {
	t.Helper()
	path := writeConfig(t, server)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	cfg["push"] = push
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// sendWithWebhook starts text on c's agent with an inline push config for
// url and returns the task's id.
func sendWithWebhook(ctx context.Context, t *testing.T, c *a2aclient.Client, text, url string) a2a.TaskID {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{
			URL: url, Token: "tok", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"},
		}},
	})
	if err != nil {
		t.Fatalf("send %q with a webhook: %v", text, err)
	}
	return res.(*a2a.Task).ID
}

func waitTaskTerminal(ctx context.Context, t *testing.T, c *a2aclient.Client, id a2a.TaskID) {
	t.Helper()
	for {
		task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: id})
		if err == nil && task.Status.State.Terminal() {
			if task.Status.State != a2a.TaskStateCompleted {
				t.Fatalf("task %s ended %s", id, task.Status.State)
			}
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("task %s did not end: %v %v", id, err, ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// replayAll is every update of task id, as a stream from the start
// (Last-Event-ID 0) carries them, described.
func replayAll(ctx context.Context, t *testing.T, c *a2aclient.Client, id a2a.TaskID) []string {
	t.Helper()
	ctx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {"0"}})
	var out []string
	for ev, err := range c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}) {
		if err != nil {
			t.Fatalf("replay of task %s: %v", id, err)
		}
		if _, ok := ev.(*a2a.Task); !ok {
			out = append(out, describeUpdate(ev))
		}
	}
	return out
}

// describeUpdate renders what a webhook must get of an update.
func describeUpdate(ev a2a.Event) string {
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return fmt.Sprintf("%v status %s", v.Metadata[agenta2a.MetaSeq], v.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		text := ""
		for _, p := range v.Artifact.Parts {
			text += p.Text()
		}
		return fmt.Sprintf("%v artifact %s append=%v last=%v %q", v.Metadata[agenta2a.MetaSeq], v.Artifact.ID, v.Append, v.LastChunk, text)
	}
	return fmt.Sprintf("%T", ev)
}

// describeOnce describes each delivered update once, in order.
func describeOnce(ns []pushtest.Notification) []string {
	var out []string
	seen := map[int64]bool{}
	for _, n := range ns {
		if !seen[n.Seq] {
			seen[n.Seq] = true
			out = append(out, describeUpdate(n.Event))
		}
	}
	return out
}

// at keeps the notifications posted to path.
func at(ns []pushtest.Notification, path string) []pushtest.Notification {
	var out []pushtest.Notification
	for _, n := range ns {
		if n.Path == path {
			out = append(out, n)
		}
	}
	return out
}

func seqsIn(ns []pushtest.Notification) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.Seq
	}
	return out
}
