package main

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// acmeRuns are the objects tenant acme owns in the isolation tests.
type acmeRuns struct {
	done, waiting, context string
}

// seedAcme makes a finished run and one waiting for input, as acme.
func seedAcme(t *testing.T, s *server) acmeRuns {
	t.Helper()
	var done, waiting runJSON
	r := s.call(t, acmeKey, "POST", "/v1/agents/echo/messages", `{"text":"hello from acme"}`)
	if r.status != 200 {
		t.Fatalf("acme's send: %d %s", r.status, r.body)
	}
	r.json(t, &done)
	r = s.call(t, acmeKey, "POST", "/v1/agents/conformance/messages", `{"text":"tck-input-required"}`)
	if r.status != 200 {
		t.Fatalf("acme's input-required send: %d %s", r.status, r.body)
	}
	r.json(t, &waiting)
	if done.Status != "completed" || waiting.Status != "input-required" {
		t.Fatalf("acme's runs are %s and %s, want completed and input-required", done.Status, waiting.Status)
	}
	return acmeRuns{done: done.ID, waiting: waiting.ID, context: done.ContextID}
}

// TestTenantIsolation tries every route of both APIs with another tenant's
// ids: each answers 404 (or an empty list), as if the ids did not exist,
// and the owner's objects are unchanged afterwards. On memstore here; on
// PostgreSQL in TestTenantIsolationPostgres.
func TestTenantIsolation(t *testing.T) {
	testTenantIsolation(t, startWithAuth(t, "", authYAML))
}

func TestTenantIsolationPostgres(t *testing.T) {
	testTenantIsolation(t, startWithAuth(t, sharedDSN(t), authYAML))
}

func testTenantIsolation(t *testing.T, s *server) {
	own := seedAcme(t, s)
	t.Run("rest", func(t *testing.T) { restIsolation(t, s, own) })
	for _, b := range allA2ABindings {
		t.Run("a2a-"+b.name, func(t *testing.T) { a2aIsolation(t, s, own, b) })
	}
	// The owner still sees its objects as they were.
	for _, id := range []string{own.done, own.waiting} {
		if r := s.call(t, acmeKey, "GET", "/v1/runs/"+id, ""); r.status != 200 {
			t.Fatalf("acme's run %s after the other tenant's attempts: %d %s", id, r.status, r.body)
		}
	}
	var w runJSON
	s.call(t, acmeKey, "GET", "/v1/runs/"+own.waiting, "").json(t, &w)
	if w.Status != "input-required" {
		t.Errorf("acme's waiting run is %s after the other tenant's cancel and input, want input-required", w.Status)
	}
	var msgs struct {
		Messages []any `json:"messages"`
	}
	s.call(t, acmeKey, "GET", "/v1/contexts/"+own.context+"/messages", "").json(t, &msgs)
	if len(msgs.Messages) != 2 {
		t.Errorf("acme's context has %d messages after the other tenant sent into its id, want 2", len(msgs.Messages))
	}
}

func restIsolation(t *testing.T, s *server, own acmeRuns) {
	for _, c := range []struct{ method, path, body string }{
		{"GET", "/v1/runs/" + own.done, ""},
		{"HEAD", "/v1/runs/" + own.done, ""},
		{"GET", "/v1/runs/" + own.done + "/events", ""},
		{"GET", "/v1/runs/" + own.done + "/events?after=1", ""},
		{"HEAD", "/v1/runs/" + own.done + "/events", ""},
		{"GET", "/v1/runs/" + own.done + "/trajectory", ""},
		{"POST", "/v1/runs/" + own.waiting + "/cancel", ""},
		{"POST", "/v1/runs/" + own.waiting + "/input", `{"text":"hijack"}`},
	} {
		r := s.call(t, globexKey, c.method, c.path, c.body)
		if r.status != 404 {
			t.Errorf("globex %s %s: %d %s, want 404", c.method, c.path, r.status, r.body)
		}
		if strings.Contains(r.body, "hello from acme") {
			t.Errorf("globex %s %s leaks acme's text: %s", c.method, c.path, r.body)
		}
		// The owner gets an answer on the same route: the 404 is about
		// the tenant, not a broken route.
		if c.method == "GET" {
			if r := s.call(t, acmeKey, c.method, c.path, c.body); r.status != 200 {
				t.Errorf("acme %s %s: %d %s, want 200", c.method, c.path, r.status, r.body)
			}
		}
	}
	if r := s.call(t, globexKey, "GET", "/v1/runs/"+own.done+"/events", "", "Last-Event-ID", "1"); r.status != 404 {
		t.Errorf("globex resuming acme's events with Last-Event-ID: %d %s, want 404", r.status, r.body)
	}
	for _, path := range []string{"/v1/runs", "/v1/runs?context=" + own.context, "/v1/contexts/" + own.context + "/messages"} {
		r := s.call(t, globexKey, "GET", path, "")
		if (r.status != 200 && r.status != 404) || strings.Contains(r.body, own.done) || strings.Contains(r.body, "hello from acme") {
			t.Errorf("globex GET %s: %d %s, want nothing of acme's", path, r.status, r.body)
		}
	}
	// Sending into acme's context id starts globex's own conversation:
	// its run sees none of acme's messages.
	r := s.call(t, globexKey, "POST", "/v1/agents/echo/messages", `{"text":"globex here","context_id":"`+own.context+`"}`)
	if r.status != 200 || strings.Contains(r.body, "hello from acme") {
		t.Errorf("globex sending into acme's context id: %d %s, want its own run without acme's messages", r.status, r.body)
	}
}

func a2aIsolation(t *testing.T, s *server, own acmeRuns, b a2aBinding) {
	ctx := context.Background()
	other := s.a2aClientOf(t, "conformance", globexKey, b)
	owner := s.a2aClientOf(t, "conformance", acmeKey, b)
	notFound := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("globex %s of acme's task: %v, want TaskNotFound", what, err)
		}
	}
	if _, err := owner.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(own.waiting)}); err != nil {
		t.Fatalf("acme's own GetTask: %v", err)
	}
	_, err := other.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(own.waiting)})
	notFound("GetTask", err)
	_, err = other.CancelTask(ctx, &a2a.CancelTaskRequest{ID: a2a.TaskID(own.waiting)})
	notFound("CancelTask", err)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hijack"))
	msg.TaskID = a2a.TaskID(own.waiting)
	_, err = other.SendMessage(ctx, &a2a.SendMessageRequest{Message: msg})
	notFound("SendMessage to the task", err)
	for _, err := range other.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(own.waiting)}) {
		notFound("SubscribeToTask", err)
		break
	}
	list, err := other.ListTasks(ctx, &a2a.ListTasksRequest{})
	if b.version != a2a.Version && errors.Is(err, a2a.ErrUnsupportedOperation) {
		list, err = &a2a.ListTasksResponse{}, nil // v0.3's JSON-RPC binding has no tasks/list
	}
	if err != nil {
		t.Fatalf("globex ListTasks: %v", err)
	}
	for _, task := range list.Tasks {
		if string(task.ID) == own.waiting || string(task.ID) == own.done {
			t.Errorf("globex ListTasks lists acme's task %s", task.ID)
		}
	}
	pushIsolation(t, owner, other, own)
}

// pushIsolation: the push-notification configs of another tenant's task
// are as absent as the task: every config method answers TaskNotFound,
// also for the id of a config the owner set, which stays as it was.
func pushIsolation(t *testing.T, owner, other pushConfigClient, own acmeRuns) {
	ctx := context.Background()
	id := a2a.TaskID(own.waiting)
	hook := &a2a.PushConfig{TaskID: id, ID: "acme-hook", URL: "http://127.0.0.1:9/acme-hook", Token: "acme-token"}
	if _, err := owner.CreateTaskPushConfig(ctx, hook); err != nil {
		t.Fatalf("acme's own CreateTaskPushConfig: %v", err)
	}
	check := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("globex %s on acme's task: %v, want TaskNotFound", what, err)
		}
	}
	got, err := other.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: id, ID: hook.ID})
	check("GetTaskPushConfig", err)
	if got != nil && got.Token == hook.Token {
		t.Errorf("globex read acme's config: %+v", got)
	}
	_, err = other.ListTaskPushConfigs(ctx, &a2a.ListTaskPushConfigRequest{TaskID: id})
	check("ListTaskPushConfigs", err)
	_, err = other.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: id, ID: hook.ID, URL: "http://127.0.0.1:9/globex"})
	check("CreateTaskPushConfig", err)
	check("DeleteTaskPushConfig", other.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: id, ID: hook.ID}))
	mine, err := owner.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: id, ID: hook.ID})
	if err != nil || mine.URL != hook.URL || mine.Token != hook.Token {
		t.Errorf("acme's config after globex's attempts: %+v, %v; want it unchanged", mine, err)
	}
	if err := owner.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: id, ID: hook.ID}); err != nil {
		t.Errorf("acme deleting its config: %v", err)
	}
}

// pushConfigClient is the config methods of a2a-go's client.
type pushConfigClient interface {
	GetTaskPushConfig(context.Context, *a2a.GetTaskPushConfigRequest) (*a2a.PushConfig, error)
	ListTaskPushConfigs(context.Context, *a2a.ListTaskPushConfigRequest) ([]*a2a.PushConfig, error)
	CreateTaskPushConfig(context.Context, *a2a.PushConfig) (*a2a.PushConfig, error)
	DeleteTaskPushConfig(context.Context, *a2a.DeleteTaskPushConfigRequest) error
}

// TestConcurrentRunsLimit: with limits.concurrent_runs, a tenant's send
// beyond its active runs is refused with 429 and Retry-After (counted in
// the store by the runtime's task listing), another tenant's is served,
// and the tenant may send again once its run ends.
func TestConcurrentRunsLimit(t *testing.T) {
	testConcurrentRunsLimit(t, startWithAuth(t, "", authYAML+"limits: {concurrent_runs: 1}\n"))
}

func TestConcurrentRunsLimitPostgres(t *testing.T) {
	testConcurrentRunsLimit(t, startWithAuth(t, sharedDSN(t), authYAML+"limits: {concurrent_runs: 1}\n"))
}

func testConcurrentRunsLimit(t *testing.T, s *server) {
	r := s.call(t, acmeKey, "POST", "/v1/agents/echo/messages?wait=false", `{"text":"stream 50 every 200ms"}`)
	if r.status != 202 {
		t.Fatalf("acme's long run: %d %s", r.status, r.body)
	}
	var long runJSON
	r.json(t, &long)
	r = s.call(t, acmeKey, "POST", "/v1/agents/echo/messages", `{"text":"one more"}`)
	if r.status != 429 || r.header.Get("Retry-After") == "" || !strings.Contains(r.body, "tenant acme has 1 active runs") {
		t.Fatalf("acme's second run: %d %q %s, want 429 with Retry-After", r.status, r.header.Get("Retry-After"), r.body)
	}
	if r := s.call(t, globexKey, "POST", "/v1/agents/echo/messages", `{"text":"hi"}`); r.status != 200 {
		t.Fatalf("globex's run: %d %s", r.status, r.body)
	}
	if r := s.call(t, acmeKey, "POST", "/v1/runs/"+long.ID+"/cancel", ""); r.status != 200 && r.status != 202 {
		t.Fatalf("cancel acme's long run: %d %s", r.status, r.body)
	}
	deadline := time.Now().Add(testTimeout)
	for {
		r := s.call(t, acmeKey, "POST", "/v1/agents/echo/messages", `{"text":"again"}`)
		if r.status == 200 {
			return
		}
		if r.status != 429 || time.Now().After(deadline) {
			t.Fatalf("acme's send after its run ended: %d %s", r.status, r.body)
		}
		time.Sleep(20 * time.Millisecond) // the cancel lands within the cancel grace
	}
}
