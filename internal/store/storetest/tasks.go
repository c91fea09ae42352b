package storetest

import (
	"fmt"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testTasks(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"CreateSetsVersionTenantAndTimes": testCreateSetsFields,
		"CreateKeepsGivenCreatedAt":       testCreateKeepsCreatedAt,
		"RoundTripsEveryField":            testTaskRoundTrip,
		"CreateDuplicateIsConflict":       testCreateDuplicate,
		"CreateValidation":                testCreateValidation,
		"GetUnknownIsNotFound":            testGetUnknown,
		"UpdateReplacesAndBumpsVersion":   testUpdate,
		"UpdateStaleVersionIsConflict":    testUpdateStale,
		"UpdateUnknownIsNotFound":         testUpdateUnknown,
	})
}

func testCreateSetsFields(t *testing.T, s store.Store) {
	task := newTask("t-1", "c-1", 0)
	task.CreatedAt = time.Time{}
	task.Tenant = "someone-else"
	before := time.Now()
	got := createTask(t, t.Context(), s, task)
	after := time.Now()
	if got.Version != 1 {
		t.Errorf("Version after create = %d, want 1", got.Version)
	}
	if got.Tenant != run.DefaultTenant {
		t.Errorf("Tenant of a task created without a tenant = %q, want %q (from the context, not the input)", got.Tenant, run.DefaultTenant)
	}
	wantRecent(t, "CreatedAt left zero", got.CreatedAt, before, after)
	if !got.UpdatedAt.Equal(got.CreatedAt) {
		t.Errorf("UpdatedAt = %v, want it equal to the defaulted CreatedAt %v", got.UpdatedAt, got.CreatedAt)
	}

	ctx := tenantCtx(t, "acme")
	got = createTask(t, ctx, s, newTask("t-2", "c-1", 0))
	if got.Tenant != "acme" {
		t.Errorf("Tenant of a task created in tenant acme = %q, want acme", got.Tenant)
	}
}

func testCreateKeepsCreatedAt(t *testing.T, s store.Store) {
	before := time.Now()
	got := createTask(t, t.Context(), s, newTask("t-1", "c-1", 7))
	after := time.Now()
	if !micro(got.CreatedAt).Equal(at(7)) {
		t.Errorf("CreatedAt = %v, want the given %v", got.CreatedAt, at(7))
	}
	wantRecent(t, "UpdatedAt on create", got.UpdatedAt, before, after)
}

func testTaskRoundTrip(t *testing.T, s store.Store) {
	ctx := tenantCtx(t, "acme")
	want := *fullTask("t-full", "c-1")
	got := createTask(t, ctx, s, &want)
	want.Tenant = "acme"
	want.Version = 1
	want.UpdatedAt = got.UpdatedAt
	wantSameJSON(t, "task read back after create", normTask(got), normTask(want))
}

func testCreateDuplicate(t *testing.T, s store.Store) {
	ctx := t.Context()
	orig := createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	dup := newTask("t-1", "c-2", 2)
	dup.AgentID = "other-agent"
	err := s.Apply(ctx, store.Change{TaskID: "t-1", CreateTask: dup})
	wantClass(t, err, errdefs.ClassConflict, "creating task t-1 twice")
	got := getTask(t, ctx, s, "t-1")
	wantSameJSON(t, "task after a failed duplicate create", normTask(got), normTask(orig))
}

func testCreateValidation(t *testing.T, s store.Store) {
	cases := map[string]func(task *run.Task){
		"missing id":         func(task *run.Task) { task.ID = "" },
		"missing context id": func(task *run.Task) { task.ContextID = "" },
		"missing agent id":   func(task *run.Task) { task.AgentID = "" },
		"unknown state":      func(task *run.Task) { task.State = "sleeping" },
		"empty state":        func(task *run.Task) { task.State = "" },
		"negative version":   func(task *run.Task) { task.Version = -1 },
		"invalid raw json": func(task *run.Task) {
			task.Artifacts = []model.Artifact{{ID: "a", Parts: []model.Part{{Type: model.PartData, Data: []byte("{not json")}}}}
		},
		"unencodable metadata": func(task *run.Task) { task.Metadata = map[string]any{"ch": make(chan int)} },
	}
	for _, name := range sortedKeys(cases) {
		t.Run(name, func(t *testing.T) {
			task := newTask("t-bad", "c-1", 1)
			cases[name](task)
			err := s.Apply(t.Context(), store.Change{TaskID: task.ID, CreateTask: task})
			wantClass(t, err, errdefs.ClassValidation, "create with "+name)
			if task.ID != "" {
				_, err = s.GetTask(t.Context(), task.ID)
				wantClass(t, err, errdefs.ClassNotFound, "GetTask after a rejected create")
			}
		})
	}
}

func testGetUnknown(t *testing.T, s store.Store) {
	_, err := s.GetTask(t.Context(), "no-such-task")
	wantClass(t, err, errdefs.ClassNotFound, "GetTask of an unknown id")
}

func testUpdate(t *testing.T, s store.Store) {
	ctx := tenantCtx(t, "acme")
	created := createTask(t, ctx, s, fullTask("t-1", "c-1"))

	upd := created
	upd.State = run.StateCompleted
	upd.StatusMessage = nil
	upd.Error = nil
	upd.Artifacts = []model.Artifact{{ID: "art-2", Parts: []model.Part{model.TextPart("done")}}}
	upd.Usage = model.TokenUsage{InputTokens: 1, OutputTokens: 2, TotalTokens: 3}
	upd.ModelUsage = map[string]model.TokenUsage{"gpt-large": {InputTokens: 1, OutputTokens: 2, TotalTokens: 3}}
	upd.Attempt = 3
	upd.CancelRequested = false
	upd.Signals = upd.Signals[1:] // the owner took the first
	upd.Metadata = map[string]any{"only": "this"}
	// Immutable fields: the store keeps the stored values.
	upd.Tenant = "other"
	upd.ContextID = "c-other"
	upd.AgentID = "agent-other"
	upd.CreatedAt = at(99)

	before := time.Now()
	apply(t, ctx, s, store.Change{TaskID: "t-1", UpdateTask: &upd})
	after := time.Now()
	got := getTask(t, ctx, s, "t-1")

	if got.Version != 2 {
		t.Errorf("Version after one update = %d, want 2", got.Version)
	}
	wantRecent(t, "UpdatedAt after update", got.UpdatedAt, before, after)
	if got.UpdatedAt.Before(created.UpdatedAt) {
		t.Errorf("UpdatedAt went backwards: %v after update, %v before", got.UpdatedAt, created.UpdatedAt)
	}
	want := upd
	want.Tenant, want.ContextID, want.AgentID, want.CreatedAt = created.Tenant, created.ContextID, created.AgentID, created.CreatedAt
	want.Version = 2
	want.UpdatedAt = got.UpdatedAt
	wantSameJSON(t, "task after update (mutable fields replaced, immutable kept)", normTask(got), normTask(want))

	upd = got
	upd.State = run.StateCompleted
	apply(t, ctx, s, store.Change{TaskID: "t-1", UpdateTask: &upd})
	if v := getTask(t, ctx, s, "t-1").Version; v != 3 {
		t.Errorf("Version after two updates = %d, want 3", v)
	}
}

func testUpdateStale(t *testing.T, s store.Store) {
	ctx := t.Context()
	created := createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	first := created
	first.State = run.StateWorking
	apply(t, ctx, s, store.Change{TaskID: "t-1", UpdateTask: &first})
	current := getTask(t, ctx, s, "t-1")

	for _, version := range []int64{0, 1, 3, 10} {
		stale := created
		stale.Version = version
		stale.State = run.StateFailed
		err := s.Apply(ctx, store.Change{TaskID: "t-1", UpdateTask: &stale})
		wantClass(t, err, errdefs.ClassConflict, fmt.Sprintf("update with version %d while version 2 is stored", version))
		got := getTask(t, ctx, s, "t-1")
		wantSameJSON(t, "task after a rejected update", normTask(got), normTask(current))
	}
}

func testUpdateUnknown(t *testing.T, s store.Store) {
	task := newTask("ghost", "c-1", 1)
	task.Version = 1
	err := s.Apply(t.Context(), store.Change{TaskID: "ghost", UpdateTask: task})
	wantClass(t, err, errdefs.ClassNotFound, "update of an unknown task")
	_, err = s.GetTask(t.Context(), "ghost")
	wantClass(t, err, errdefs.ClassNotFound, "GetTask after an update of an unknown task")
}
