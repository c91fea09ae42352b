package api_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/api"
	"agentd/internal/model"
	"agentd/internal/run"
)

func text(s string) map[string]string { return map[string]string{"text": s} }

func inContext(s, contextID string) map[string]string {
	return map[string]string{"text": s, "context_id": contextID}
}

// lastText is the text of the run's last message of role.
func lastText(v api.RunView, role model.Role) string {
	for i := len(v.Messages) - 1; i >= 0; i-- {
		if v.Messages[i].Role == role {
			return v.Messages[i].Text()
		}
	}
	return ""
}

func TestListRunsPagesNewestFirst(t *testing.T) {
	e := newEnv(t, api.Options{})
	const n = 7
	var created []string
	for i := range n {
		v := e.send("echo", "", inContext(fmt.Sprintf("hello %d", i), "paging"))
		created = append(created, v.ID)
	}
	other := e.send("echo", "", text("elsewhere"))

	var got []string
	cursor, pages := "", 0
	for {
		path := "/v1/runs?context=paging&limit=3"
		if cursor != "" {
			path += "&cursor=" + cursor
		}
		page := decode[api.RunList](t, e.do(http.MethodGet, path, nil), http.StatusOK)
		pages++
		if page.Total != n {
			t.Errorf("page %d: total %d, want %d", pages, page.Total, n)
		}
		if len(page.Runs) > 3 {
			t.Fatalf("page %d has %d runs, limit 3", pages, len(page.Runs))
		}
		for _, r := range page.Runs {
			if r.ContextID != "paging" {
				t.Errorf("run %s of context %s in the paging context's list", r.ID, r.ContextID)
			}
			got = append(got, r.ID)
		}
		if page.NextCursor == "" {
			break
		}
		if pages > n {
			t.Fatal("paging does not end")
		}
		cursor = page.NextCursor
	}
	want := slices.Clone(created)
	slices.Reverse(want)
	if !slices.Equal(got, want) {
		t.Errorf("paged runs %v, want newest first %v", got, want)
	}
	if pages != 3 {
		t.Errorf("%d pages, want 3", pages)
	}

	all := decode[api.RunList](t, e.do(http.MethodGet, "/v1/runs?limit=100", nil), http.StatusOK)
	if all.Total != n+1 || len(all.Runs) != n+1 || all.Runs[0].ID != other.ID {
		t.Errorf("unfiltered list: total %d, %d runs, first %s; want %d, newest %s", all.Total, len(all.Runs), all.Runs[0].ID, n+1, other.ID)
	}
}

func TestListRunsFiltersByStatusAndContext(t *testing.T) {
	e := newEnv(t, api.Options{})
	done := e.send("echo", "", inContext("hi", "c-done"))
	asking := e.send("conformance", "", inContext("tck-input-required", "c-ask"))
	if asking.Status != run.StateInputRequired {
		t.Fatalf("tck-input-required answered %s, want input-required", asking.Status)
	}
	ids := func(path string) []string {
		page := decode[api.RunList](t, e.do(http.MethodGet, path, nil), http.StatusOK)
		var out []string
		for _, r := range page.Runs {
			out = append(out, r.ID)
		}
		if page.Total != len(out) {
			t.Errorf("%s: total %d, but %d runs in one page", path, page.Total, len(out))
		}
		return out
	}
	for _, c := range []struct {
		path string
		want []string
	}{
		{"/v1/runs?status=completed", []string{done.ID}},
		{"/v1/runs?status=input-required", []string{asking.ID}},
		{"/v1/runs?status=completed,input-required", []string{asking.ID, done.ID}},
		{"/v1/runs?status=completed&status=input-required", []string{asking.ID, done.ID}},
		{"/v1/runs?status=failed", nil},
		{"/v1/runs?context=c-ask", []string{asking.ID}},
		{"/v1/runs?context=c-done&status=input-required", nil},
		{"/v1/runs?context=nowhere", nil},
	} {
		if got := ids(c.path); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.path, got, c.want)
		}
	}
	// Leave nothing running for the cleanup.
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+asking.ID+"/cancel", nil), http.StatusOK)
}

func TestContextTranscriptInOrder(t *testing.T) {
	e := newEnv(t, api.Options{})
	first := e.send("echo", "", inContext("one", "talk"))
	second := e.send("echo", "", inContext("two", "talk"))
	if first.ContextID != "talk" || second.ContextID != "talk" {
		t.Fatalf("context ids %q, %q", first.ContextID, second.ContextID)
	}
	list := decode[api.MessageList](t, e.do(http.MethodGet, "/v1/contexts/talk/messages", nil), http.StatusOK)
	var got []string
	for _, m := range list.Messages {
		got = append(got, string(m.Role)+":"+m.Text()+"@"+m.TaskID)
	}
	want := []string{
		"user:one@" + first.ID, "assistant:one@" + first.ID,
		"user:two@" + second.ID, "assistant:two@" + second.ID,
	}
	if !slices.Equal(got, want) {
		t.Errorf("transcript %v, want %v", got, want)
	}
	// Paging through the transcript gives the same order.
	page := decode[api.MessageList](t, e.do(http.MethodGet, "/v1/contexts/talk/messages?limit=3", nil), http.StatusOK)
	rest := decode[api.MessageList](t, e.do(http.MethodGet, fmt.Sprintf("/v1/contexts/talk/messages?after=%d", page.NextAfter), nil), http.StatusOK)
	if len(page.Messages) != 3 || len(rest.Messages) != 1 || rest.Messages[0].Text() != "two" || rest.Messages[0].Role != model.RoleAssistant {
		t.Errorf("paged transcript: %d then %d messages", len(page.Messages), len(rest.Messages))
	}
}

func TestBlockingSendAnswersTheRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("echo", "", text("hello there"))
	if v.Status != run.StateCompleted || v.AgentID != "echo" || v.ContextID == "" || v.Error != nil {
		t.Fatalf("run %+v", v)
	}
	if got := lastText(v, model.RoleAssistant); got != "hello there" {
		t.Errorf("answer %q, want the echoed text", got)
	}
	if v.Usage.TotalTokens == 0 {
		t.Error("usage not reported")
	}
	if got := e.run(v.ID); got.Status != run.StateCompleted || len(got.Messages) != len(v.Messages) {
		t.Errorf("GET shows %s with %d messages", got.Status, len(got.Messages))
	}
}

func TestInputRequiredThenInput(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("conformance", "", text("tck-input-required"))
	if v.Status != run.StateInputRequired {
		t.Fatalf("status %s, want input-required", v.Status)
	}
	if v.StatusMessage == nil || !strings.Contains(v.StatusMessage.Text(), "more input") {
		t.Errorf("status message %+v does not ask for input", v.StatusMessage)
	}
	r := e.do(http.MethodPost, "/v1/runs/"+v.ID+"/input", text("42"))
	done := decode[api.RunView](t, r, http.StatusOK)
	if r.header.Get("Location") != "/v1/runs/"+v.ID {
		t.Errorf("Location %q", r.header.Get("Location"))
	}
	if done.ID != v.ID || done.Status != run.StateCompleted {
		t.Fatalf("after input: run %s is %s, want %s completed", done.ID, done.Status, v.ID)
	}
	if got := lastText(done, model.RoleAssistant); got != "Received: 42" {
		t.Errorf("answer %q, want %q", got, "Received: 42")
	}
	if done.Attempt != 2 {
		t.Errorf("attempt %d, want 2", done.Attempt)
	}
	// Input to a run that no longer waits is a conflict.
	problem(t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/input", text("again")), http.StatusConflict, "")
}

// TestEventsOfAResumedRun replays a finished run that asked for input: one
// GET from the start gives both attempts, densely, and closes after the
// final run.end — not after the first attempt's.
func TestEventsOfAResumedRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("conformance", "", text("tck-input-required"))
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/input", text("42")), http.StatusOK)
	res := e.openEvents(ctxT(t), "/v1/runs/"+v.ID+"/events")
	defer res.Body.Close()
	evs := newSSE(res.Body).readAll(t)
	var types []string
	for _, ev := range evs {
		if ev.typ == "run.start" || ev.typ == "run.end" || ev.typ == "input" {
			types = append(types, ev.typ)
		}
	}
	if want := []string{"run.start", "input", "run.end", "run.start", "run.end"}; !slices.Equal(types, want) {
		t.Fatalf("a completed run's stream from seq 0 gives %v, want both attempts %v", types, want)
	}
	checkDense(t, evs)
	if st := evs[len(evs)-1].data["state"]; st != "completed" {
		t.Errorf("final run.end state %v", st)
	}
}

func TestCancelRunningRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("conformance", "?wait=false", text("tck-cancel"))
	e.waitStatus(v.ID, "working")

	first := decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil), http.StatusAccepted)
	if first.ID != v.ID {
		t.Errorf("cancel answered run %s", first.ID)
	}
	// A second request while the run stops is harmless.
	if r := e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil); r.status != http.StatusAccepted && r.status != http.StatusOK {
		t.Errorf("second cancel: %s", r)
	}
	end := e.waitStatus(v.ID, "canceled")
	if end.Error != nil && end.Error.Message == "" {
		t.Errorf("canceled run has an empty error: %+v", end.Error)
	}
	// Idempotent once canceled: 200 with the canceled run.
	again := decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil), http.StatusOK)
	if again.Status != run.StateCanceled {
		t.Errorf("cancel of a canceled run answered %s", again.Status)
	}
	res := e.openEvents(ctxT(t), "/v1/runs/"+v.ID+"/events")
	defer res.Body.Close()
	evs := newSSE(res.Body).readAll(t)
	checkDense(t, evs)
	if st := evs[len(evs)-1].data["state"]; st != "canceled" {
		t.Errorf("run.end state %v, want canceled", st)
	}
}

func TestCancelWhileWaitingForInput(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("conformance", "", text("tck-input-required"))
	got := decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/cancel", nil), http.StatusOK)
	if got.Status != run.StateCanceled {
		t.Fatalf("cancel of an input-required run answered %s", got.Status)
	}
	if e.run(v.ID).Status != run.StateCanceled {
		t.Error("GET does not show the run canceled")
	}
	problem(t, e.do(http.MethodPost, "/v1/runs/"+v.ID+"/input", text("late")), http.StatusConflict, "", "canceled")
}

func TestWaitFalseAnswersAtOnce(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("echo", "?wait=false", text("stream 5 every 10ms"))
	if v.Status.Terminal() {
		t.Errorf("?wait=false answered a %s run", v.Status)
	}
	e.waitStatus(v.ID, "completed")
}

// TestRunSurvivesClientDisconnect drops a blocking POST while its run works:
// the run completes anyway (invariant 5).
func TestRunSurvivesClientDisconnect(t *testing.T) {
	e := newEnv(t, api.Options{})
	ctx, cancel := context.WithCancel(ctxT(t))
	defer cancel()
	body := strings.NewReader(`{"text":"stream 30 every 10ms","context_id":"leaver"}`)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, e.srv.URL+"/v1/agents/echo/messages", body)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan error, 1)
	go func() {
		res, err := e.c.Do(req)
		if err == nil {
			res.Body.Close()
		}
		errc <- err
	}()
	var id string
	tick := time.NewTicker(2 * time.Millisecond)
	defer tick.Stop()
	for id == "" {
		page := decode[api.RunList](t, e.do(http.MethodGet, "/v1/runs?context=leaver", nil), http.StatusOK)
		if len(page.Runs) > 0 {
			id = page.Runs[0].ID
			break
		}
		select {
		case err := <-errc:
			t.Fatalf("the blocking POST ended before the run appeared: %v", err)
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-tick.C:
		}
	}
	cancel()
	if err := <-errc; err == nil {
		t.Log("the POST had already answered; the disconnect came too late to matter")
	}
	v := e.waitStatus(id, "completed")
	if got := strings.Fields(lastText(v, model.RoleAssistant)); len(got) != 30 {
		t.Errorf("answer has %d tokens, want 30", len(got))
	}
}

// TestSameMessageIDStartsOneRun resends a message with the client's id in
// the same context: the answer is the same run, and only one exists.
func TestSameMessageIDStartsOneRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	body := map[string]any{
		"context_id": "idem",
		"message":    map[string]any{"id": "msg-1", "role": "user", "parts": []map[string]string{{"type": "text", "text": "hello"}}},
	}
	first := e.send("echo", "", body)
	second := e.send("echo", "", body)
	if first.ID != second.ID {
		t.Errorf("same message id started runs %s and %s", first.ID, second.ID)
	}
	if second.Status != run.StateCompleted {
		t.Errorf("the repeat answered %s", second.Status)
	}
	page := decode[api.RunList](t, e.do(http.MethodGet, "/v1/runs?context=idem", nil), http.StatusOK)
	if page.Total != 1 {
		t.Errorf("%d runs in the context, want 1", page.Total)
	}
	list := decode[api.MessageList](t, e.do(http.MethodGet, "/v1/contexts/idem/messages", nil), http.StatusOK)
	if len(list.Messages) != 2 {
		t.Errorf("transcript has %d messages, want the user's once and the answer", len(list.Messages))
	}
	// The same id in another context is another message.
	body["context_id"] = "idem-2"
	if other := e.send("echo", "", body); other.ID == first.ID {
		t.Error("the same message id in another context returned the first context's run")
	}
}

// TestRetryWhileRunningReturnsTheRun resends a message (same id) while the
// run it started still works, as a client retrying a timed-out request
// does: it must get that run back, not a conflict.
func TestRetryWhileRunningReturnsTheRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	body := map[string]any{
		"context_id": "retry",
		"message":    map[string]any{"id": "msg-retry", "role": "user", "parts": []map[string]string{{"type": "text", "text": "stream 20 every 20ms"}}},
	}
	first := e.send("echo", "?wait=false", body)
	r := e.do(http.MethodPost, "/v1/agents/echo/messages?wait=false", body)
	if r.status != http.StatusAccepted && r.status != http.StatusOK {
		t.Errorf("retry of message msg-retry while its run works: %s; want the run %s", r, first.ID)
	} else if again := decode[api.RunView](t, r, r.status); again.ID != first.ID {
		t.Errorf("retry answered run %s, want %s", again.ID, first.ID)
	}
	e.waitStatus(first.ID, "completed")
	if n := decode[api.RunList](t, e.do(http.MethodGet, "/v1/runs?context=retry", nil), http.StatusOK).Total; n != 1 {
		t.Errorf("%d runs, want 1", n)
	}
}

func TestAgents(t *testing.T) {
	e := newEnv(t, api.Options{})
	list := decode[api.AgentList](t, e.do(http.MethodGet, "/v1/agents", nil), http.StatusOK)
	var ids []string
	for _, a := range list.Agents {
		ids = append(ids, a.ID)
	}
	if !slices.Equal(ids, []string{"echo", "assistant", "conformance", "refund", "research", "team", "relay", "scout", "desk", "guarded", "goal"}) {
		t.Errorf("agents %v", ids)
	}
	a := decode[api.AgentView](t, e.do(http.MethodGet, "/v1/agents/assistant", nil), http.StatusOK)
	if !slices.Equal(a.Tools, []string{"clock", "calculator"}) || a.CardURL != "/agents/assistant/.well-known/agent-card.json" {
		t.Errorf("assistant %+v", a)
	}
	problem(t, e.do(http.MethodGet, "/v1/agents/ghost", nil), http.StatusNotFound, "", "ghost")
}

// TestCancelQueuedRun queues a run behind a busy context (the conformance
// agent enqueues): canceling it ends it at once, with a complete event log,
// and the context's running run is untouched.
func TestCancelQueuedRun(t *testing.T) {
	e := newEnv(t, api.Options{})
	busy := e.send("conformance", "?wait=false", inContext("tck-cancel", "queue"))
	e.waitStatus(busy.ID, "working")
	queued := e.send("conformance", "?wait=false", inContext("tck-complete-task", "queue"))
	if queued.Status != run.StateSubmitted {
		t.Fatalf("queued run is %s, want submitted", queued.Status)
	}
	got := decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+queued.ID+"/cancel", nil), http.StatusOK)
	if got.Status != run.StateCanceled {
		t.Fatalf("cancel of a queued run answered %s", got.Status)
	}
	res := e.openEvents(ctxT(t), "/v1/runs/"+queued.ID+"/events")
	evs := newSSE(res.Body).readAll(t)
	res.Body.Close()
	checkDense(t, evs)
	if st := evs[len(evs)-1].data["state"]; st != "canceled" {
		t.Errorf("queued run's run.end state %v", st)
	}
	if st := e.run(busy.ID).Status; st != run.StateWorking {
		t.Errorf("the running run is %s after its queued successor was canceled", st)
	}
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+busy.ID+"/cancel", nil), http.StatusAccepted)
	e.waitStatus(busy.ID, "canceled")
	// The canceled queued run never starts.
	if st := e.run(queued.ID).Status; st != run.StateCanceled {
		t.Errorf("queued run became %s", st)
	}
}

// TestQueuedRunStartsWhenTheContextFrees blocks on a queued run: it answers
// once the run ahead of it ended and the queued one ran.
func TestQueuedRunStartsWhenTheContextFrees(t *testing.T) {
	e := newEnv(t, api.Options{})
	busy := e.send("conformance", "?wait=false", inContext("tck-cancel", "fifo"))
	e.waitStatus(busy.ID, "working")
	queued := e.send("conformance", "?wait=false", inContext("tck-complete-task now", "fifo"))
	decode[api.RunView](t, e.do(http.MethodPost, "/v1/runs/"+busy.ID+"/cancel", nil), http.StatusAccepted)
	done := e.waitStatus(queued.ID, "completed")
	if got := lastText(done, model.RoleAssistant); got != "Task completed: tck-complete-task now" {
		t.Errorf("queued run answered %q", got)
	}
	if st := e.run(busy.ID).Status; st != run.StateCanceled {
		t.Errorf("first run is %s", st)
	}
}

// TestTranscriptPastTheEnd pages beyond a transcript's last message: an
// empty page whose messages are [], not null.
func TestTranscriptPastTheEnd(t *testing.T) {
	e := newEnv(t, api.Options{})
	e.send("echo", "", inContext("one", "talk"))
	r := e.do(http.MethodGet, "/v1/contexts/talk/messages?after=999", nil)
	if r.status != http.StatusOK || !bytes.Contains(r.body, []byte(`"messages":[]`)) {
		t.Errorf("past the end: %s, want 200 with \"messages\":[]", r)
	}
}

// TestEscapedPathIDs reaches ids through escaped path segments: the
// handlers see them unescaped.
func TestEscapedPathIDs(t *testing.T) {
	e := newEnv(t, api.Options{})
	v := e.send("echo", "", inContext("one", "ctx"))
	// %63 is "c": the client's escaping differs from Go's, so chi routes
	// the escaped path.
	list := decode[api.MessageList](t, e.do(http.MethodGet, "/v1/contexts/%63tx/messages", nil), http.StatusOK)
	if len(list.Messages) != 2 {
		t.Errorf("transcript of %%63tx: %d messages, want 2", len(list.Messages))
	}
	run := fmt.Sprintf("/v1/runs/%%%02X%s", v.ID[0], v.ID[1:])
	if got := decode[api.RunView](t, e.do(http.MethodGet, run, nil), http.StatusOK); got.ID != v.ID {
		t.Errorf("GET %s: run %s, want %s", run, got.ID, v.ID)
	}

	const reserved = "a/b?c#d"
	r := e.do(http.MethodPost, "/v1/agents/echo/messages", inContext("two", reserved))
	if r.status == http.StatusBadRequest && strings.Contains(string(r.body), "context_id") {
		t.Skipf("the runtime refuses context id %q: %s", reserved, r.body)
	}
	decode[api.RunView](t, r, http.StatusOK)
	list = decode[api.MessageList](t, e.do(http.MethodGet, "/v1/contexts/"+url.PathEscape(reserved)+"/messages", nil), http.StatusOK)
	if len(list.Messages) != 2 || list.Messages[0].ContextID != reserved {
		t.Errorf("transcript of %q: %+v", reserved, list.Messages)
	}
}
