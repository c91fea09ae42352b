package a2a_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/a2a/pushtest"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// newPushEnv is an env whose server delivers push notifications, loopback
// allowed, with short timeouts, and a webhook receiver for them.
func newPushEnv(t *testing.T, tune ...func(*agenta2a.PushOptions)) (*env, *pushtest.Receiver) {
	t.Helper()
	return newPushEnvOn(t, memstore.New(), tune...)
}

// newPushEnvOn is newPushEnv on the store st.
func newPushEnvOn(t *testing.T, st store.Store, tune ...func(*agenta2a.PushOptions)) (*env, *pushtest.Receiver) {
	t.Helper()
	rcv := pushtest.NewReceiver()
	t.Cleanup(rcv.Close)
	e := newEnvOn(t, st, 0, nil, func(o *agenta2a.Options) {
		o.Push = agenta2a.PushOptions{AllowPrivate: true, Timeout: 300 * time.Millisecond, ClaimTTL: 2 * time.Second, ClaimEvery: 50 * time.Millisecond}
		for _, f := range tune {
			f(&o.Push)
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		e.a2a.DeliverPushes(ctx)
	}()
	t.Cleanup(func() { cancel(); <-done })
	return e, rcv
}

// TestPushConfigMethods: the four config methods on every binding, v1.0
// and v0.3, through the official client.
func TestPushConfigMethods(t *testing.T) {
	e, rcv := newPushEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "conformance", b)
			ctx := ctxT(t)
			res, err := c.SendMessage(ctx, sendReq("tck-input-required push"))
			if err != nil {
				t.Fatal(err)
			}
			task := res.(*a2a.Task)
			want := &a2a.PushConfig{TaskID: task.ID, ID: "hook-1", URL: rcv.URL("/h1"), Token: "tok", Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"}}
			got, err := c.CreateTaskPushConfig(ctx, want)
			if err != nil {
				t.Fatalf("CreateTaskPushConfig: %v", err)
			}
			wantSameConfig(t, "created", got, want)
			minted, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: rcv.URL("/h2")})
			if err != nil || minted.ID == "" {
				t.Fatalf("CreateTaskPushConfig without an id: %+v, %v; want an id minted", minted, err)
			}
			if got, err = c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "hook-1"}); err != nil {
				t.Fatalf("GetTaskPushConfig: %v", err)
			}
			wantSameConfig(t, "read back", got, want)
			wantConfigIDs(t, c.ListTaskPushConfigs, task.ID, []string{"hook-1", minted.ID})
			if err := c.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: task.ID, ID: "hook-1"}); err != nil {
				t.Fatalf("DeleteTaskPushConfig: %v", err)
			}
			wantConfigIDs(t, c.ListTaskPushConfigs, task.ID, []string{minted.ID})
			_, err = c.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: task.ID, ID: "hook-1"})
			wantA2AError(t, err, a2a.ErrTaskNotFound, "hook-1", "GetTaskPushConfig of a deleted config")
			_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: "no-such-task", URL: rcv.URL("/h")})
			wantA2AError(t, err, a2a.ErrTaskNotFound, "no-such-task", "CreateTaskPushConfig for an unknown task")
			_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID})
			wantA2AError(t, err, a2a.ErrInvalidParams, "url", "CreateTaskPushConfig without a url")
			_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: "ftp://example.com/x"})
			wantA2AError(t, err, a2a.ErrInvalidParams, "url", "CreateTaskPushConfig with an ftp url")
			for i := 1; i < agenta2a.MaxPushConfigsPerTask; i++ {
				if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "n" + strconv.Itoa(i), URL: rcv.URL("/n")}); err != nil {
					t.Fatalf("config %d of %d: %v", i+1, agenta2a.MaxPushConfigsPerTask, err)
				}
			}
			_, err = c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "one-too-many", URL: rcv.URL("/n")})
			wantA2AError(t, err, a2a.ErrInvalidParams, "delete one first", "CreateTaskPushConfig beyond the limit")
			if _, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, ID: "n1", URL: rcv.URL("/n1")}); err != nil {
				t.Errorf("replacing a config at the limit: %v", err)
			}
		})
	}
}

func wantSameConfig(t *testing.T, what string, got, want *a2a.PushConfig) {
	t.Helper()
	g, w := *got, *want
	g.Tenant, w.Tenant = "", ""
	if g.TaskID != w.TaskID || g.ID != w.ID || g.URL != w.URL || g.Token != w.Token || (g.Auth == nil) != (w.Auth == nil) ||
		(g.Auth != nil && (g.Auth.Scheme != w.Auth.Scheme || g.Auth.Credentials != w.Auth.Credentials)) {
		t.Errorf("%s config: got %+v (auth %+v), want %+v (auth %+v)", what, g, g.Auth, w, w.Auth)
	}
}

func wantConfigIDs(t *testing.T, list func(context.Context, *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error), task a2a.TaskID, want []string) {
	t.Helper()
	cs, err := list(ctxT(t), &a2a.ListTaskPushConfigRequest{TaskID: task})
	if err != nil {
		t.Fatalf("ListTaskPushConfigs: %v", err)
	}
	var got []string
	for _, c := range cs {
		got = append(got, c.ID)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Errorf("configs of task %s: got %v, want %v", task, got, want)
	}
}

func wantA2AError(t *testing.T, err, code error, mention, what string) {
	t.Helper()
	if !errors.Is(err, code) || !strings.Contains(err.Error(), mention) {
		t.Errorf("%s: got %v, want %v naming %q", what, err, code, mention)
	}
}

// TestPushRefusesPrivateTargets: without push.allow_private, webhooks on
// loopback, private and link-local (metadata) addresses are refused when
// the config is set — also inline in SendMessage, before any task exists.
func TestPushRefusesPrivateTargets(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "conformance", bindings[0])
	ctx := ctxT(t)
	res, err := c.SendMessage(ctx, sendReq("tck-input-required push"))
	if err != nil {
		t.Fatal(err)
	}
	task := res.(*a2a.Task)
	for _, u := range []string{"http://127.0.0.1:9/h", "http://localhost:9/h", "http://169.254.169.254/latest/meta-data", "http://[::1]/h", "http://10.1.2.3/h", "https://192.168.0.1/h", "http://100.100.100.200/latest", "http://[64:ff9b::a9fe:a9fe]/h"} {
		_, err := c.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: task.ID, URL: u})
		wantA2AError(t, err, a2a.ErrInvalidParams, "push.allow_private", "CreateTaskPushConfig to "+u)
	}
	before, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	req := sendReq("tck-complete-task inline")
	req.Config = &a2a.SendMessageConfig{PushConfig: &a2a.PushConfig{URL: "http://127.0.0.1:9/h"}}
	_, err = c.SendMessage(ctx, req)
	wantA2AError(t, err, a2a.ErrInvalidParams, "configuration.taskPushNotificationConfig.url", "SendMessage with a private inline push config")
	after, err := c.ListTasks(ctx, &a2a.ListTasksRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if after.TotalSize != before.TotalSize {
		t.Errorf("tasks after a refused send: %d, want %d (nothing created)", after.TotalSize, before.TotalSize)
	}
}

// TestPushDeliversEveryUpdateInOrder: a webhook that fails its first
// deliveries (503 twice, then a timeout) still gets every update of the
// task, in order, exactly as a stream from the start carries them, with
// the token in both header spellings and the credentials.
func TestPushDeliversEveryUpdateInOrder(t *testing.T) {
	e, rcv := newPushEnv(t)
	rcv.FailNext(pushtest.Fault{Status: 503}, pushtest.Fault{Status: 503}, pushtest.Fault{Hold: time.Second})
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "echo", b)
			req := sendReq("stream 30 every 5ms")
			req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{
				URL: rcv.URL("/" + b.name), Token: "tok-" + b.name, Auth: &a2a.PushAuthInfo{Scheme: "Bearer", Credentials: "cred"},
			}}
			res, err := c.SendMessage(ctxT(t), req)
			if err != nil {
				t.Fatal(err)
			}
			id := res.(*a2a.Task).ID
			if _, err := e.rt.Wait(ctxT(t), string(id)); err != nil {
				t.Fatal(err)
			}
			want, media := replay(t, c, id, 0), "application/a2a+json"
			v0 := b.version == a2av0.Version
			if v0 {
				// A v0.3 webhook gets the Task at every status update.
				want, media = slices.DeleteFunc(want, func(s string) bool { return !strings.Contains(s, " status ") }), "application/json"
			}
			got := waitDistinct(t, rcv, "/"+b.name, len(want))
			if !pushtest.InOrder(got) {
				t.Errorf("updates out of order: seqs %v", seqsOf(got))
			}
			if d := describeDeduped(got); !slices.Equal(d, want) {
				t.Errorf("delivered updates:\n%s\nwant (a stream from the start):\n%s", strings.Join(d, "\n"), strings.Join(want, "\n"))
			}
			if v0 {
				wantSameAnswer(t, c, id, got[len(got)-1].Event.(*a2a.Task))
			}
			h := got[len(got)-1].Header
			if h.Get("A2A-Notification-Token") != "tok-"+b.name || h.Get("X-A2A-Notification-Token") != "tok-"+b.name ||
				h.Get("Authorization") != "Bearer cred" || h.Get("Content-Type") != media {
				t.Errorf("webhook headers: %v", h)
			}
		})
	}
	if rcv.Failed() != 3 {
		t.Errorf("faults met: %d, want 3", rcv.Failed())
	}
}

// wantSameAnswer checks that the last Task a v0.3 webhook got carries the
// task's artifacts as GetTask answers them.
func wantSameAnswer(t *testing.T, c *a2aclient.Client, id a2a.TaskID, last *a2a.Task) {
	t.Helper()
	task, err := c.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: id})
	if err != nil {
		t.Fatal(err)
	}
	text := func(arts []*a2a.Artifact) (s string) {
		for _, a := range arts {
			for _, p := range a.Parts {
				s += p.Text()
			}
		}
		return s
	}
	if got, want := text(last.Artifacts), text(task.Artifacts); got != want || want == "" {
		t.Errorf("the last Task's artifacts say %q, GetTask's %q", got, want)
	}
}

// TestPushSlowWebhookDelaysNoOther: a webhook that takes a second per
// update holds up neither the run nor another webhook of the same task.
func TestPushSlowWebhookDelaysNoOther(t *testing.T) {
	e, rcv := newPushEnv(t, func(o *agenta2a.PushOptions) { o.Timeout = 5 * time.Second })
	rcv.Slow("/slow", time.Second)
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 10 every 5ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{ID: "slow", URL: rcv.URL("/slow")}}
	res, err := c.SendMessage(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	if _, err := c.CreateTaskPushConfig(ctxT(t), &a2a.PushConfig{TaskID: id, ID: "fast", URL: rcv.URL("/fast")}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.rt.Wait(ctxT(t), string(id)); err != nil {
		t.Fatal(err)
	}
	waitTerminal(t, rcv, "/fast", id)
	if n := len(at(rcv.Notifications(), "/slow")); n > 2 {
		t.Errorf("the slow webhook took %d updates (one a second) by the time the fast one had them all: it did not wait for them", n)
	}
}

// TestPushGivesUpAndGoesOn: an update the webhook refuses for good (a 400)
// is given up at once, reported, and the next updates still go out.
func TestPushGivesUpAndGoesOn(t *testing.T) {
	given := make(chan agenta2a.Delivery, 100)
	e, rcv := newPushEnv(t, func(o *agenta2a.PushOptions) {
		o.Observe = func(d agenta2a.Delivery) {
			if d.Err != nil {
				given <- d
			}
		}
	})
	rcv.FailNext(pushtest.Fault{Status: 400})
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 5 every 5ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: rcv.URL("/h")}}
	res, err := c.SendMessage(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	id := res.(*a2a.Task).ID
	got := waitTerminal(t, rcv, "/h", id)
	want := replay(t, c, id, 0)
	select {
	case d := <-given:
		if d.Attempts != 1 || d.TaskID != string(id) || !strings.Contains(d.Err.Error(), "400") {
			t.Errorf("given up: %+v, want the first update after one attempt, with the 400", d)
		}
		if d := describeDeduped(got); !slices.Equal(d, want[1:]) {
			t.Errorf("delivered:\n%s\nwant every update but the first:\n%s", strings.Join(d, "\n"), strings.Join(want[1:], "\n"))
		}
	case <-time.After(testTimeout):
		t.Fatal("no delivery was reported given up")
	}
}

func at(ns []pushtest.Notification, path string) []pushtest.Notification {
	var out []pushtest.Notification
	for _, n := range ns {
		if n.Path == path {
			out = append(out, n)
		}
	}
	return out
}

// TestPushKeepsTenantsAndTasksApart: each config gets its own task's
// updates only, also when tasks of two tenants deliver at once.
func TestPushKeepsTenantsAndTasksApart(t *testing.T) {
	e, rcv := newPushEnv(t)
	c := e.client(t, "echo", bindings[0])
	req := sendReq("stream 20 every 5ms")
	req.Config = &a2a.SendMessageConfig{ReturnImmediately: true, PushConfig: &a2a.PushConfig{URL: rcv.URL("/a")}}
	res, err := c.SendMessage(ctxT(t), req)
	if err != nil {
		t.Fatal(err)
	}
	idA := string(res.(*a2a.Task).ID)
	// Tenant b's finished task and its config, written behind the
	// runtime's back (the front end takes the tenant from the caller's
	// credentials): the deliverer claims configs of every tenant and must
	// read each task in its own.
	bctx := run.WithTenant(ctxT(t), "tenant-b")
	idB := model.NewID()
	seedFinishedTask(t, e.st, bctx, idB)
	if err := e.st.PutPushConfig(bctx, run.PushConfig{TaskID: idB, ID: "b", Config: []byte(`{"url": "` + rcv.URL("/b") + `"}`)}); err != nil {
		t.Fatal(err)
	}
	gotA := waitTerminal(t, rcv, "/a", a2a.TaskID(idA))
	gotB := waitTerminal(t, rcv, "/b", a2a.TaskID(idB))
	for _, n := range gotA {
		if n.TaskID != idA {
			t.Errorf("webhook /a got an update of task %s (want only %s)", n.TaskID, idA)
		}
	}
	for _, n := range gotB {
		if n.TaskID != idB {
			t.Errorf("webhook /b got an update of task %s (want only %s)", n.TaskID, idB)
		}
	}
}

// waitTerminal waits until the webhook at path got a terminal status of
// task id, and returns what it got.
func waitTerminal(t *testing.T, rcv *pushtest.Receiver, path string, id a2a.TaskID) []pushtest.Notification {
	t.Helper()
	var got []pushtest.Notification
	err := rcv.WaitFor(ctxT(t), func(ns []pushtest.Notification) bool {
		got = got[:0]
		for _, n := range ns {
			if n.Path == path {
				got = append(got, n)
			}
		}
		return slices.ContainsFunc(got, func(n pushtest.Notification) bool { return terminalFor(n, id) })
	})
	if err != nil {
		t.Fatalf("webhook %s: no terminal status of task %s (got %d updates: %v)", path, id, len(got), seqsOf(got))
	}
	return got
}

// waitDistinct waits until the webhook at path got n distinct updates,
// and returns what it got.
func waitDistinct(t *testing.T, rcv *pushtest.Receiver, path string, n int) []pushtest.Notification {
	t.Helper()
	var got []pushtest.Notification
	err := rcv.WaitFor(ctxT(t), func(ns []pushtest.Notification) bool {
		got = got[:0]
		for _, x := range ns {
			if x.Path == path {
				got = append(got, x)
			}
		}
		return len(pushtest.Seqs(got)) >= n
	})
	if err != nil {
		t.Fatalf("webhook %s: %d distinct updates, want %d (seqs %v)", path, len(pushtest.Seqs(got)), n, seqsOf(got))
	}
	return got
}

func terminalFor(n pushtest.Notification, id a2a.TaskID) bool {
	switch v := n.Event.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return v.TaskID == id && v.Status.State.Terminal()
	case *a2a.Task:
		return v.ID == id && v.Status.State.Terminal()
	}
	return false
}

func seqsOf(ns []pushtest.Notification) []int64 {
	out := make([]int64, len(ns))
	for i, n := range ns {
		out[i] = n.Seq
	}
	return out
}

// describeDeduped describes each delivered update once, in order.
func describeDeduped(ns []pushtest.Notification) []string {
	var out []string
	seen := map[int64]bool{}
	for _, n := range ns {
		if seen[n.Seq] {
			continue
		}
		seen[n.Seq] = true
		if task, ok := n.Event.(*a2a.Task); ok {
			out = append(out, fmt.Sprintf("%d status %s", n.Seq, task.Status.State)) // as describe renders a status update
		} else {
			out = append(out, describe(n.Event))
		}
	}
	return out
}

// seedFinishedTask stores a completed echo task id, whose log is one
// attempt answering "from b".
func seedFinishedTask(t *testing.T, st store.Store, ctx context.Context, id string) {
	t.Helper()
	now := time.Now().UTC()
	ev := func(seq int64, typ, data string) run.Event {
		return run.Event{RunID: id, Seq: seq, Type: typ, Time: now,
			Data: []byte(`{"run_id": "` + id + `", "seq": ` + strconv.FormatInt(seq, 10) + `, "type": "` + typ + `"` + data + `}`)}
	}
	err := st.Apply(ctx, store.Change{
		TaskID:     id,
		CreateTask: &run.Task{ID: id, ContextID: model.NewID(), AgentID: "echo", State: run.StateCompleted, CreatedAt: now, UpdatedAt: now},
		Events: []run.Event{
			ev(1, runtime.EventRunStart, `, "attempt": 1`),
			ev(2, runtime.EventStatus, `, "state": "working"`),
			ev(3, runtime.EventDelta, `, "text": "from b"`),
			ev(4, runtime.EventStatus, `, "state": "completed"`),
			ev(5, runtime.EventRunEnd, `, "state": "completed"`),
		},
	})
	if err != nil {
		t.Fatal(err)
	}
}
