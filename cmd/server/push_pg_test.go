package main

// The process-level test of push notifications: a real webhook receiver on
// loopback that fails the first deliveries, two replicas on one
// PostgreSQL, and the replica running the task SIGKILLed mid-run.

import (
	"context"
	"errors"
	"fmt"
	"net/http"
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

// TestPushSurvivesReplicaKill: two tenants (API keys acme and globex), a
// task each, each with its own webhook. acme's task runs on A, its webhook
// answers 503, then 502, then holds a request past the delivery timeout;
// A is SIGKILLed while it delivers. B resumes the run and, once A's claim
// expired, the delivery from its durable cursor: acme's webhook ends up
// with every update of its task at least once, in order, exactly as a
// stream from the start carries them — and globex's webhook, delivered on
// B meanwhile, with globex's task's updates only: no update of another
// task or tenant reaches either, and each carries its own config's token.
func TestPushSurvivesReplicaKill(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writePushConfig(t, map[string]any{"lease_ttl": "2s"},
		map[string]any{"allow_private": true, "timeout": "500ms", "claim_ttl": "2s", "retry_for": "1m"})
	addAuth(t, cfg)
	rcv := pushtest.NewReceiver()
	defer rcv.Close()
	rcv.FailNextAt("/acme", pushtest.Fault{Status: 503}, pushtest.Fault{Status: 502}, pushtest.Fault{Hold: 1500 * time.Millisecond})
	keys := []string{"ACME_KEY=" + acmeKey, "GLOBEX_KEY=" + globexKey, "READER_KEY=" + readerKey}
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	// A alone claims acme's webhook (B starts once A met the first
	// fault), so its delivery is A's until A dies.
	a := startReplicaEnv(t, "A", dsn, cfg, keys)
	acmeOnA := keyedClient(t, a, acmeKey)
	acme := sendWithWebhook(ctx, t, acmeOnA, streamRun, rcv.URL("/acme"), "tok-acme")
	for rcv.Failed() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("acme's webhook was never called")
		case <-time.After(10 * time.Millisecond):
		}
	}
	b := startReplicaEnv(t, "B", dsn, cfg, keys)
	acmeOnB, globexOnB := keyedClient(t, b, acmeKey), keyedClient(t, b, globexKey)
	globex := sendWithWebhook(ctx, t, globexOnB, "stream 40 every 20ms", rcv.URL("/globex"), "tok-globex")
	if err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(pushtest.Seqs(at(ns, "/acme"))) >= 15 }); err != nil {
		t.Fatalf("webhook /acme got %d updates before the kill: %v", len(at(rcv.Notifications(), "/acme")), err)
	}
	wantDeliveredByRunner(ctx, t, dsn, acme)
	a.signal(syscall.SIGKILL)
	killedAt := time.Now()
	_ = a.waitExit(t, testTimeout)
	before := len(at(rcv.Notifications(), "/acme"))

	for _, w := range []struct {
		path, token string
		c           *a2aclient.Client
		id          a2a.TaskID
	}{{"/acme", "tok-acme", acmeOnB, acme}, {"/globex", "tok-globex", globexOnB, globex}} {
		waitTaskTerminal(ctx, t, w.c, w.id)
		want := replayAll(ctx, t, w.c, w.id)
		err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(pushtest.Seqs(at(ns, w.path))) >= len(want) })
		got := at(rcv.Notifications(), w.path)
		if err != nil {
			t.Fatalf("webhook %s: %d distinct updates, want %d: %v", w.path, len(pushtest.Seqs(got)), len(want), err)
		}
		if !pushtest.InOrder(got) {
			t.Errorf("webhook %s: updates out of order: %v", w.path, seqsIn(got))
		}
		if d := describeOnce(got); !slices.Equal(d, want) {
			t.Errorf("webhook %s got:\n%s\nwant (a stream of the task from the start):\n%s", w.path, strings.Join(d, "\n"), strings.Join(want, "\n"))
		}
		for _, n := range got {
			if n.TaskID != string(w.id) || n.Header.Get("A2A-Notification-Token") != w.token {
				t.Errorf("webhook %s got an update of task %s with token %q, want only task %s's with %q",
					w.path, n.TaskID, n.Header.Get("A2A-Notification-Token"), w.id, w.token)
			}
		}
		t.Logf("webhook %s: %d notifications, %d distinct updates", w.path, len(got), len(want))
	}
	// Each tenant sees its own task only: the other's is not found.
	if _, err := globexOnB.GetTask(ctx, &a2a.GetTaskRequest{ID: acme}); !errors.Is(err, a2a.ErrTaskNotFound) {
		t.Errorf("globex reading acme's task: %v, want TaskNotFound", err)
	}
	if other := len(rcv.Notifications()) - len(at(rcv.Notifications(), "/acme")) - len(at(rcv.Notifications(), "/globex")); other != 0 {
		t.Errorf("%d notifications reached other paths", other)
	}
	resumed := at(rcv.Notifications(), "/acme")[before:]
	if len(resumed) > 0 {
		t.Logf("first delivery after the kill %v later (claim TTL 2s); %d requests met a fault", resumed[0].Received.Sub(killedAt), rcv.Failed())
	}
	if rcv.Failed() != 3 {
		t.Errorf("faults met: %d, want 3 (all at /acme)", rcv.Failed())
	}
}

// wantDeliveredByRunner checks that the replica running task id (its
// lease's owner) also holds the claim on the task's webhook, and that the
// task still runs: the kill that follows hits both.
func wantDeliveredByRunner(ctx context.Context, t *testing.T, dsn string, id a2a.TaskID) {
	t.Helper()
	var lease, claim, state string
	err := dbConn(t, dsn).QueryRow(ctx, `SELECT l.owner, p.claim_owner, k.state FROM push_configs p
		JOIN leases l ON l.run_id = p.task_id JOIN tasks k ON k.tenant = p.tenant AND k.id = p.task_id
		WHERE p.task_id = $1`, string(id)).Scan(&lease, &claim, &state)
	if err != nil {
		t.Fatal(err)
	}
	if lease == "" || claim != lease || state != "working" {
		t.Fatalf("task %s before the kill: %s, run by %q, webhook claimed by %q; want it working, both on A", id, state, lease, claim)
	}
}

// addAuth adds authYAML's API keys (acme, globex) to the configuration at
// path.
func addAuth(t *testing.T, path string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg, auth map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal([]byte(authYAML), &auth); err != nil {
		t.Fatal(err)
	}
	cfg["auth"] = auth["auth"]
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
}

// keyedClient is a2a-go's JSON-RPC client of r's echo agent presenting key.
func keyedClient(t *testing.T, r *replica, key string) *a2aclient.Client {
	t.Helper()
	hc := &http.Client{Transport: keyTransport{key}}
	iface := &a2a.AgentInterface{URL: r.base + "/agents/echo/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(t.Context(), []*a2a.AgentInterface{iface}, a2aclient.WithJSONRPCTransport(hc))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
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
// url with token and returns the task's id.
func sendWithWebhook(ctx context.Context, t *testing.T, c *a2aclient.Client, text, url, token string) a2a.TaskID {
	t.Helper()
	res, err := c.SendMessage(ctx, &a2a.SendMessageRequest{
		Message: a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text)),
		Config: &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{
			URL: url, Token: token, Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"},
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
