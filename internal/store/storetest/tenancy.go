package storetest

import (
	"fmt"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

func testTenancy(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"RecordsAreInvisibleToOtherTenants": testTenantIsolation,
		"WritesFromOtherTenantsDoNotReach":  testTenantWrites,
		"ContextIDsArePerTenant":            testTenantContexts,
		"EmptyTenantIsDefault":              testTenantDefault,
		"SweepsListEveryTenant":             testListAllTenants,
	})
}

// seedTenant writes one of everything in tenant a.
func seedTenant(t *testing.T, s store.Store) {
	t.Helper()
	a := tenantCtx(t, "tenant-a")
	apply(t, a, s, store.Change{
		Idempotency: &store.IdempotencyKey{ContextID: "c-1", MessageID: "m-1"},
		TaskID:      "t-1",
		CreateTask:  newTask("t-1", "c-1", 1),
		Messages:    []run.Message{textMessage("c-1", "m-1", "secret")},
		Events:      runEvents("t-1", 1, 3),
	})
	putPush(t, a, s, pushConfig("t-1", "p-1"))
	saveCheckpoint(t, a, s, checkpoint("t-1", 1, 1))
}

func testTenantIsolation(t *testing.T, s store.Store) {
	seedTenant(t, s)
	b := tenantCtx(t, "tenant-b")
	_, err := s.GetTask(b, "t-1")
	wantClass(t, err, errdefs.ClassNotFound, "GetTask of another tenant's task")
	got, page := listIDs(t, b, s, run.TaskQuery{})
	wantIDs(t, "ListTasks in another tenant", got, nil)
	if page.Total != 0 {
		t.Errorf("ListTasks Total in another tenant = %d, want 0", page.Total)
	}
	got, _ = listIDs(t, b, s, run.TaskQuery{ContextID: "c-1"})
	wantIDs(t, "ListTasks of another tenant's context", got, nil)
	wantPositions(t, "ListMessages of another tenant's context", positions(listMessages(t, b, s, run.MessageQuery{ContextID: "c-1"}).Messages), nil)
	wantPage(t, "ReadEvents of another tenant's run", readEvents(t, b, s, "t-1", 0, 100), nil, 0, 0)
	_, err = s.GetPushConfig(b, "t-1", "p-1")
	wantClass(t, err, errdefs.ClassNotFound, "GetPushConfig of another tenant's task")
	wantIDs(t, "ListPushConfigs of another tenant's task", listPushIDs(t, b, s, "t-1"), nil)
	if step := loadStep(t, b, s, "t-1"); step != "<none>" {
		t.Errorf("LoadCheckpoint of another tenant's run = %s, want none", step)
	}
	wantIDs(t, "ListCheckpoints of another tenant's run", listCheckpointSteps(t, b, s, "t-1"), nil)
	// The default tenant is a tenant like any other.
	_, err = s.GetTask(t.Context(), "t-1")
	wantClass(t, err, errdefs.ClassNotFound, "GetTask of tenant-a's task from the default tenant")
}

func testTenantWrites(t *testing.T, s store.Store) {
	seedTenant(t, s)
	a, b := tenantCtx(t, "tenant-a"), tenantCtx(t, "tenant-b")
	upd := getTask(t, a, s, "t-1")
	upd.State = run.StateFailed
	wantClass(t, s.Apply(b, store.Change{TaskID: "t-1", UpdateTask: &upd}), errdefs.ClassNotFound, "updating another tenant's task")
	wantClass(t, s.DeletePushConfig(b, "t-1", "p-1"), errdefs.ClassNotFound, "deleting another tenant's push config")
	wantNoError(t, s.PruneEvents(b, "t-1", 3), "PruneEvents of another tenant's run (a no-op)")
	wantNoError(t, s.DeleteCheckpoints(b, "t-1"), "DeleteCheckpoints of another tenant's run (a no-op)")

	if got := getTask(t, a, s, "t-1"); got.State != run.StateSubmitted || got.Version != 1 {
		t.Errorf("tenant-a's task after tenant-b's update: state %s, version %d; want submitted, 1", got.State, got.Version)
	}
	wantIDs(t, "tenant-a's push configs after tenant-b's delete", listPushIDs(t, a, s, "t-1"), []string{"p-1"})
	wantPage(t, "tenant-a's events after tenant-b's prune", readEvents(t, a, s, "t-1", 0, 100), span(1, 3), 3, 0)
	wantIDs(t, "tenant-a's checkpoints after tenant-b's delete", listCheckpointSteps(t, a, s, "t-1"), []string{"step-1"})
}

func testTenantContexts(t *testing.T, s store.Store) {
	seedTenant(t, s)
	b := tenantCtx(t, "tenant-b")
	apply(t, b, s, submit("c-1", "m-1", "t-b"))
	page := listMessages(t, b, s, run.MessageQuery{ContextID: "c-1"})
	wantPositions(t, "tenant-b's transcript of c-1", positions(page.Messages), []int64{1})
	if page.Messages[0].TaskID != "t-b" {
		t.Errorf("tenant-b's transcript of c-1 shows a message of task %s, want t-b", page.Messages[0].TaskID)
	}
	got, _ := listIDs(t, b, s, run.TaskQuery{ContextID: "c-1"})
	wantIDs(t, "tenant-b's tasks of c-1", got, []string{"t-b"})
	a := tenantCtx(t, "tenant-a")
	wantPositions(t, "tenant-a's transcript of c-1", positions(listMessages(t, a, s, run.MessageQuery{ContextID: "c-1"}).Messages), []int64{1})
}

func testTenantDefault(t *testing.T, s store.Store) {
	createTask(t, tenantCtx(t, ""), s, newTask("t-1", "c-1", 1))
	got := getTask(t, tenantCtx(t, run.DefaultTenant), s, "t-1")
	if got.Tenant != run.DefaultTenant {
		t.Errorf("Tenant of a task created with an empty tenant = %q, want %q", got.Tenant, run.DefaultTenant)
	}
	getTask(t, t.Context(), s, "t-1")
}

// testListAllTenants: ListTasksOfAllTenants pages the matching tasks of
// every tenant in one order, newest first, each with its tenant, whatever
// the context's tenant; a context id is refused.
func testListAllTenants(t *testing.T, s store.Store) {
	waiting := func(id string, createdAt int, agent string) *run.Task {
		task := newTask(id, "c-"+id, createdAt)
		task.State, task.AgentID = run.StateInputRequired, agent
		return task
	}
	for _, c := range []struct {
		tenant string
		task   *run.Task
	}{
		{"tenant-a", waiting("a-1", 1, "agent-a")},
		{"tenant-b", waiting("b-2", 2, "agent-a")},
		{"", waiting("d-3", 3, "agent-a")},
		{"tenant-a", waiting("a-4", 4, "agent-b")},
		{"tenant-b", newTask("b-5", "c-b-5", 5)},
		{"tenant-a", waiting("a-6", 6, "agent-a")},
	} {
		createTask(t, tenantCtx(t, c.tenant), s, c.task)
	}
	q := run.TaskQuery{AgentID: "agent-a", States: []run.TaskState{run.StateInputRequired}, Limit: 2}
	var got, tenants []string
	for ctx := tenantCtx(t, "tenant-z"); ; {
		page, err := s.ListTasksOfAllTenants(ctx, q)
		wantNoError(t, err, fmt.Sprintf("ListTasksOfAllTenants(%+v)", q))
		for _, task := range page.Tasks {
			got, tenants = append(got, task.ID), append(tenants, task.Tenant)
		}
		if page.NextCursor == "" {
			break
		}
		q.Cursor = page.NextCursor
	}
	wantIDs(t, "waiting tasks of agent-a in every tenant, two a page", got, []string{"a-6", "d-3", "b-2", "a-1"})
	wantIDs(t, "their tenants", tenants, []string{"tenant-a", run.DefaultTenant, "tenant-b", "tenant-a"})
	_, err := s.ListTasksOfAllTenants(t.Context(), run.TaskQuery{ContextID: "c-a-1"})
	wantClass(t, err, errdefs.ClassValidation, "ListTasksOfAllTenants with a context id")
}
