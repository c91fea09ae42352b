package main

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
)

// TestTenantIsolationOfStreamsAndPushConfigs: globex streaming a message
// into acme's waiting task gets TaskNotFound and no event, on every A2A
// binding; globex naming a push config that acme really has (its id
// known) can neither read nor delete it — not found, as if it did not
// exist — and the config is still acme's afterwards. On memstore and
// PostgreSQL.
func TestTenantIsolationOfStreamsAndPushConfigs(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startWithAuth(t, dsn, authYAML)
		own := seedAcme(t, s)
		for _, b := range allA2ABindings {
			t.Run("stream-"+b.name, func(t *testing.T) { streamIntoOthersTask(t, s, own, b) })
		}
		hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
		defer hook.Close()
		for _, b := range a2aBindings {
			t.Run("push-"+b.name, func(t *testing.T) { pushConfigOfOthers(t, s, own, b, hook.URL) })
		}
		var w runJSON
		s.call(t, acmeKey, "GET", "/v1/runs/"+own.waiting, "").json(t, &w)
		if w.Status != "input-required" {
			t.Errorf("acme's waiting run is %s after globex streamed into it, want input-required", w.Status)
		}
	})
}

func streamIntoOthersTask(t *testing.T, s *server, own acmeRuns, b a2aBinding) {
	other := s.a2aClientOf(t, "conformance", globexKey, b)
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("hijack by stream"))
	msg.TaskID = a2a.TaskID(own.waiting)
	n := 0
	for ev, err := range other.SendStreamingMessage(context.Background(), &a2a.SendMessageRequest{Message: msg}) {
		n++
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Fatalf("globex SendStreamingMessage into acme's task: event %v, error %v; want TaskNotFound first", ev, err)
		}
		break
	}
	if n == 0 {
		t.Fatal("globex SendStreamingMessage into acme's task ended without an answer, want TaskNotFound")
	}
}

func pushConfigOfOthers(t *testing.T, s *server, own acmeRuns, b a2aBinding, hookURL string) {
	ctx := context.Background()
	owner := s.a2aClientOf(t, "conformance", acmeKey, b)
	other := s.a2aClientOf(t, "conformance", globexKey, b)
	cfg, err := owner.CreateTaskPushConfig(ctx, &a2a.PushConfig{TaskID: a2a.TaskID(own.waiting), URL: hookURL + "/acme-" + b.name, Token: "acme-secret"})
	if err != nil {
		t.Fatalf("acme's CreateTaskPushConfig: %v", err)
	}
	if cfg.ID == "" {
		t.Fatal("acme's push config has no id")
	}
	// globex's own task, to name acme's config id under it too.
	r := s.call(t, globexKey, "POST", "/v1/agents/echo/messages", `{"text":"globex's own"}`)
	var mine runJSON
	r.json(t, &mine)
	for _, task := range []string{own.waiting, mine.ID} {
		got, err := other.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(task), ID: cfg.ID})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("globex GetTaskPushConfig(task %s, acme's config %s): %+v, %v; want not found", task, cfg.ID, got, err)
		}
		if got != nil && strings.Contains(got.Token, "acme") {
			t.Errorf("globex read acme's webhook token")
		}
		err = other.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(task), ID: cfg.ID})
		if !errors.Is(err, a2a.ErrTaskNotFound) {
			t.Errorf("globex DeleteTaskPushConfig(task %s, acme's config %s): %v; want not found", task, cfg.ID, err)
		}
	}
	kept, err := owner.GetTaskPushConfig(ctx, &a2a.GetTaskPushConfigRequest{TaskID: a2a.TaskID(own.waiting), ID: cfg.ID})
	if err != nil || kept.URL != cfg.URL {
		t.Fatalf("acme's push config after globex's attempts: %+v, %v; want it unchanged", kept, err)
	}
	if err := owner.DeleteTaskPushConfig(ctx, &a2a.DeleteTaskPushConfigRequest{TaskID: a2a.TaskID(own.waiting), ID: cfg.ID}); err != nil {
		t.Fatalf("acme deleting its own push config: %v", err)
	}
}
