package storetest

import (
	"errors"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testIdempotency(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"DuplicateNamesFirstTask":   testDuplicateKey,
		"OtherContextIsIndependent": testKeyOtherContext,
		"OtherTenantIsIndependent":  testKeyOtherTenant,
		"KeyValidation":             testKeyValidation,
	})
}

// submit applies the creation of task id with its first message under the
// idempotency key (contextID, messageID).
func submit(contextID, messageID, taskID string) store.Change {
	return store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: contextID, MessageID: messageID},
		TaskID:      taskID,
		CreateTask:  newTask(taskID, contextID, 1),
		Messages:    []run.Message{textMessage(contextID, messageID, "hello")},
	}
}

func testDuplicateKey(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, ctx, s, submit("c-1", "m-1", "t-first"))
	err := s.Apply(ctx, submit("c-1", "m-1", "t-second"))
	var dup *store.DuplicateError
	if !errors.As(err, &dup) {
		t.Fatalf("second submission of c-1/m-1: got %v, want a *store.DuplicateError", err)
	}
	if dup.TaskID != "t-first" {
		t.Errorf("DuplicateError.TaskID = %q, want t-first (the task that owns the key)", dup.TaskID)
	}
	if dup.Key != (store.IdempotencyKey{ContextID: "c-1", MessageID: "m-1"}) {
		t.Errorf("DuplicateError.Key = %+v, want c-1/m-1", dup.Key)
	}
	if !errdefs.IsConflict(err) {
		t.Errorf("duplicate submission error class = %s, want conflict", errdefs.ClassOf(err))
	}
	_, err = s.GetTask(ctx, "t-second")
	wantClass(t, err, errdefs.ClassNotFound, "GetTask of the duplicate submission's task")
	page, err := s.ListMessages(ctx, run.MessageQuery{ContextID: "c-1"})
	wantNoError(t, err, "ListMessages")
	if len(page.Messages) != 1 {
		t.Errorf("transcript after a duplicate submission has %d messages, want 1", len(page.Messages))
	}
}

func testKeyOtherContext(t *testing.T, s store.Store) {
	ctx := t.Context()
	apply(t, ctx, s, submit("c-1", "m-1", "t-1"))
	apply(t, ctx, s, submit("c-2", "m-1", "t-2"))
}

func testKeyOtherTenant(t *testing.T, s store.Store) {
	apply(t, tenantCtx(t, "acme"), s, submit("c-1", "m-1", "t-1"))
	apply(t, tenantCtx(t, "globex"), s, submit("c-1", "m-1", "t-2"))
}

func testKeyValidation(t *testing.T, s store.Store) {
	for _, c := range []struct {
		name   string
		change store.Change
	}{
		{"missing context", store.Change{TaskID: "t-1", Idempotency: &store.IdempotencyKey{MessageID: "m-1"}}},
		{"missing message id", store.Change{TaskID: "t-1", Idempotency: &store.IdempotencyKey{ContextID: "c-1"}}},
		{"missing task id", store.Change{Idempotency: &store.IdempotencyKey{ContextID: "c-1", MessageID: "m-1"}}},
	} {
		wantClass(t, s.Apply(t.Context(), c.change), errdefs.ClassValidation, "idempotency key with "+c.name)
	}
	// None of them recorded anything.
	apply(t, t.Context(), s, submit("c-1", "m-1", "t-1"))
}
