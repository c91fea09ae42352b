package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testPushConfigs(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"PutGetListDelete":       testPushCRUD,
		"PutReplaces":            testPushReplace,
		"UnknownIsNotFound":      testPushUnknown,
		"CreatedAtDefaultsToNow": testPushCreatedAt,
		"Validation":             testPushInvalid,
		"ClaimAcrossTenants":     testPushClaim,
		"SaveIsFencedByClaim":    testPushSaveFenced,
		"HandOverAndResume":      testPushHandOver,
		"DoneIsNeverClaimed":     testPushDone,
		"ReplaceEndsClaim":       testPushReplaceEndsClaim,
		"SaveManyAtOnce":         testPushSaveMany,
		"ParkedUntilTaskMoves":   testPushParked,
		"ParkedAtAStaleVersion":  testPushParkedStale,
	})
}

func pushConfig(taskID, id string) run.PushConfig {
	return run.PushConfig{
		TaskID:    taskID,
		ID:        id,
		Config:    json.RawMessage(fmt.Sprintf(`{"url": "https://hooks.example.com/%s", "token": "tok", "authentication": {"schemes": ["Bearer"]}}`, id)),
		CreatedAt: at(20),
	}
}

func putPush(t *testing.T, ctx context.Context, s store.Store, c run.PushConfig) {
	t.Helper()
	wantNoError(t, s.PutPushConfig(ctx, c), "PutPushConfig("+c.TaskID+", "+c.ID+")")
}

func normPush(cs []run.PushConfig) []run.PushConfig {
	out := make([]run.PushConfig, len(cs))
	for i, c := range cs {
		c.CreatedAt = micro(c.CreatedAt)
		out[i] = c
	}
	return out
}

func listPushIDs(t *testing.T, ctx context.Context, s store.Store, taskID string) []string {
	t.Helper()
	cs, err := s.ListPushConfigs(ctx, taskID)
	wantNoError(t, err, "ListPushConfigs("+taskID+")")
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.ID
	}
	return out
}

func testPushCRUD(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	createTask(t, ctx, s, newTask("t-2", "c-1", 2))
	for _, c := range []run.PushConfig{pushConfig("t-1", "p-b"), pushConfig("t-1", "p-a"), pushConfig("t-2", "p-c")} {
		putPush(t, ctx, s, c)
	}
	got, err := s.GetPushConfig(ctx, "t-1", "p-b")
	wantNoError(t, err, "GetPushConfig(t-1, p-b)")
	wantSameJSON(t, "push config read back", normPush([]run.PushConfig{got}), normPush([]run.PushConfig{pushConfig("t-1", "p-b")}))

	all, err := s.ListPushConfigs(ctx, "t-1")
	wantNoError(t, err, "ListPushConfigs(t-1)")
	wantSameJSON(t, "push configs of t-1 (ordered by id)", normPush(all), normPush([]run.PushConfig{pushConfig("t-1", "p-a"), pushConfig("t-1", "p-b")}))
	wantIDs(t, "push configs of t-2", listPushIDs(t, ctx, s, "t-2"), []string{"p-c"})

	wantNoError(t, s.DeletePushConfig(ctx, "t-1", "p-a"), "DeletePushConfig(t-1, p-a)")
	wantIDs(t, "push configs of t-1 after delete", listPushIDs(t, ctx, s, "t-1"), []string{"p-b"})
	_, err = s.GetPushConfig(ctx, "t-1", "p-a")
	wantClass(t, err, errdefs.ClassNotFound, "GetPushConfig of a deleted config")
	wantIDs(t, "push configs of t-2 after deleting one of t-1", listPushIDs(t, ctx, s, "t-2"), []string{"p-c"})
}

func testPushReplace(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	putPush(t, ctx, s, pushConfig("t-1", "p-1"))
	repl := pushConfig("t-1", "p-1")
	repl.Config = json.RawMessage(`{"url": "https://other.example.com"}`)
	repl.CreatedAt = at(30)
	putPush(t, ctx, s, repl)
	got, err := s.ListPushConfigs(ctx, "t-1")
	wantNoError(t, err, "ListPushConfigs(t-1)")
	wantSameJSON(t, "push configs after a replacing put", normPush(got), normPush([]run.PushConfig{repl}))
}

func testPushUnknown(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	_, err := s.GetPushConfig(ctx, "t-1", "p-none")
	wantClass(t, err, errdefs.ClassNotFound, "GetPushConfig of an unknown config")
	wantClass(t, s.DeletePushConfig(ctx, "t-1", "p-none"), errdefs.ClassNotFound, "DeletePushConfig of an unknown config")
	wantIDs(t, "push configs of a task without any", listPushIDs(t, ctx, s, "t-1"), nil)
	wantIDs(t, "push configs of an unknown task", listPushIDs(t, ctx, s, "t-none"), nil)
}

func testPushCreatedAt(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	c := pushConfig("t-1", "p-1")
	c.CreatedAt = time.Time{}
	before := time.Now()
	putPush(t, ctx, s, c)
	after := time.Now()
	got, err := s.GetPushConfig(ctx, "t-1", "p-1")
	wantNoError(t, err, "GetPushConfig(t-1, p-1)")
	wantRecent(t, "CreatedAt of a push config put without one", got.CreatedAt, before, after)
}

func testPushInvalid(t *testing.T, s store.Store) {
	ctx := t.Context()
	createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	spoil := map[string]func(c *run.PushConfig){
		"missing task id": func(c *run.PushConfig) { c.TaskID = "" },
		"missing id":      func(c *run.PushConfig) { c.ID = "" },
		"missing config":  func(c *run.PushConfig) { c.Config = nil },
		"invalid config":  func(c *run.PushConfig) { c.Config = json.RawMessage(`{"url":`) },
	}
	for _, name := range sortedKeys(spoil) {
		c := pushConfig("t-1", "p-1")
		spoil[name](&c)
		wantClass(t, s.PutPushConfig(ctx, c), errdefs.ClassValidation, "PutPushConfig with "+name)
	}
	wantIDs(t, "push configs after rejected puts", listPushIDs(t, ctx, s, "t-1"), nil)
}
