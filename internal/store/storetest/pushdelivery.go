package storetest

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// The delivery side of push configs: claims, the durable cursor, fencing.

const pushTTL = time.Minute

func claimPush(t *testing.T, s store.Store, owner string) []run.PushConfig {
	t.Helper()
	cs, err := s.ClaimPushDeliveries(t.Context(), owner, pushTTL, 100)
	wantNoError(t, err, "ClaimPushDeliveries("+owner+")")
	slices.SortFunc(cs, func(a, b run.PushConfig) int {
		return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.TaskID, b.TaskID), cmp.Compare(a.ID, b.ID))
	})
	return cs
}

func claimedKeys(cs []run.PushConfig) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Tenant + "/" + c.TaskID + "/" + c.ID
	}
	return out
}

// seedPush creates task t-1 with config p-1 in tenants a and b, the one in
// b with its cursor at 7.
func seedPush(t *testing.T, s store.Store) (a, b context.Context) {
	a, b = tenantCtx(t, "tenant-a"), tenantCtx(t, "tenant-b")
	for _, ctx := range []context.Context{a, b} {
		createTask(t, ctx, s, newTask("t-1", "c-1", 1))
	}
	putPush(t, a, s, pushConfig("t-1", "p-1"))
	c := pushConfig("t-1", "p-1")
	c.Delivered = 7
	putPush(t, b, s, c)
	return a, b
}

func testPushClaim(t *testing.T, s store.Store) {
	seedPush(t, s)
	got := claimPush(t, s, "r1")
	wantIDs(t, "configs r1 claims", claimedKeys(got), []string{"tenant-a/t-1/p-1", "tenant-b/t-1/p-1"})
	if got[0].Delivered != 0 || got[1].Delivered != 7 {
		t.Errorf("claimed cursors: got %d and %d, want 0 and 7", got[0].Delivered, got[1].Delivered)
	}
	for _, c := range got {
		if c.Claim.Owner != "r1" || c.Claim.Generation == 0 || !c.Claim.ExpiresAt.After(time.Now()) {
			t.Errorf("claim of %s: got %+v, want owner r1, a generation, a future expiry", c.Tenant, c.Claim)
		}
	}
	wantIDs(t, "configs r2 claims while r1 holds them", claimedKeys(claimPush(t, s, "r2")), []string{})
	_, err := s.ClaimPushDeliveries(t.Context(), "", pushTTL, 10)
	wantClass(t, err, errdefs.ClassValidation, "ClaimPushDeliveries without an owner")
}

func testPushSaveFenced(t *testing.T, s store.Store) {
	a, _ := seedPush(t, s)
	c := claimPush(t, s, "r1")[0]
	c.Delivered = 3
	saved, err := s.SavePushDelivery(a, c, pushTTL)
	wantNoError(t, err, "SavePushDelivery by the holder")
	got, err := s.GetPushConfig(a, "t-1", "p-1")
	wantNoError(t, err, "GetPushConfig")
	if got.Delivered != 3 || got.Done {
		t.Errorf("after a save of cursor 3: got delivered %d done %v", got.Delivered, got.Done)
	}
	stale := saved
	stale.Claim.Generation--
	_, err = s.SavePushDelivery(a, stale, pushTTL)
	wantClass(t, err, errdefs.ClassConflict, "SavePushDelivery with a stale generation")
	other := saved
	other.Claim.Owner = "r2"
	_, err = s.SavePushDelivery(a, other, pushTTL)
	wantClass(t, err, errdefs.ClassConflict, "SavePushDelivery by another owner")
	_, err = s.SavePushDelivery(tenantCtx(t, "tenant-c"), saved, pushTTL)
	wantClass(t, err, errdefs.ClassNotFound, "SavePushDelivery in another tenant")
	wantNoError(t, s.DeletePushConfig(a, "t-1", "p-1"), "DeletePushConfig")
	_, err = s.SavePushDelivery(a, saved, pushTTL)
	wantClass(t, err, errdefs.ClassNotFound, "SavePushDelivery of a deleted config")
}

func testPushHandOver(t *testing.T, s store.Store) {
	a, _ := seedPush(t, s)
	c := claimPush(t, s, "r1")[0]
	c.Delivered = 5
	_, err := s.SavePushDelivery(a, c, time.Nanosecond) // hand over now
	wantNoError(t, err, "SavePushDelivery handing over")
	var taken run.PushConfig
	eventually(t, "r2 claims the handed-over config", func() bool {
		for _, x := range claimPush(t, s, "r2") {
			if x.Tenant == "tenant-a" {
				taken = x
				return true
			}
		}
		return false
	})
	if taken.Delivered != 5 || taken.Claim.Generation <= c.Claim.Generation {
		t.Errorf("taken over: got cursor %d generation %d, want 5 and > %d", taken.Delivered, taken.Claim.Generation, c.Claim.Generation)
	}
	_, err = s.SavePushDelivery(a, c, pushTTL)
	wantClass(t, err, errdefs.ClassConflict, "SavePushDelivery by the previous holder")
}

func testPushDone(t *testing.T, s store.Store) {
	a, b := seedPush(t, s)
	for _, c := range claimPush(t, s, "r1") {
		c.Delivered, c.Done = 9, true
		ctx := map[string]context.Context{"tenant-a": a, "tenant-b": b}[c.Tenant]
		_, err := s.SavePushDelivery(ctx, c, pushTTL)
		wantNoError(t, err, "SavePushDelivery done")
	}
	got, err := s.GetPushConfig(b, "t-1", "p-1")
	wantNoError(t, err, "GetPushConfig")
	if !got.Done || got.Delivered != 9 {
		t.Errorf("after a done save: got done %v delivered %d", got.Done, got.Delivered)
	}
	wantIDs(t, "configs claimed after every one is done", claimedKeys(claimPush(t, s, "r2")), []string{})
}

func testPushReplaceEndsClaim(t *testing.T, s store.Store) {
	a, _ := seedPush(t, s)
	c := claimPush(t, s, "r1")[0]
	repl := pushConfig("t-1", "p-1")
	repl.Delivered = 4
	putPush(t, a, s, repl)
	_, err := s.SavePushDelivery(a, c, pushTTL)
	wantClass(t, err, errdefs.ClassConflict, "SavePushDelivery after the config was replaced")
	got := claimPush(t, s, "r2")
	wantIDs(t, "configs claimed after a replace", claimedKeys(got), []string{"tenant-a/t-1/p-1"})
	if got[0].Delivered != 4 {
		t.Errorf("replaced config's cursor: got %d, want 4", got[0].Delivered)
	}
}

func testPushSaveMany(t *testing.T, s store.Store) {
	a, b := seedPush(t, s)
	putPush(t, a, s, pushConfig("t-1", "p-2"))
	cs := claimPush(t, s, "r1") // tenant-a p-1, tenant-a p-2, tenant-b p-1
	cs[0].Delivered, cs[2].Delivered, cs[2].Done = 11, 12, true
	cs[1].Claim.Generation-- // a stale claim
	saved, err := s.SavePushDeliveries(t.Context(), []run.PushConfig{cs[0], cs[1], cs[2]}, pushTTL)
	wantNoError(t, err, "SavePushDeliveries")
	if !slices.Equal(saved, []bool{true, false, true}) {
		t.Errorf("saved: got %v, want [true false true] (the stale claim refused)", saved)
	}
	for _, w := range []struct {
		ctx       context.Context
		delivered int64
		done      bool
	}{{a, 11, false}, {b, 12, true}} {
		got, err := s.GetPushConfig(w.ctx, "t-1", "p-1")
		wantNoError(t, err, "GetPushConfig")
		if got.Delivered != w.delivered || got.Done != w.done {
			t.Errorf("%s after a batch save: delivered %d done %v, want %d %v", run.TenantFrom(w.ctx), got.Delivered, got.Done, w.delivered, w.done)
		}
	}
	saved, err = s.SavePushDeliveries(t.Context(), nil, pushTTL)
	if err != nil || len(saved) != 0 {
		t.Errorf("SavePushDeliveries of nothing: %v, %v", saved, err)
	}
}

func testPushParked(t *testing.T, s store.Store) {
	a, _ := seedPush(t, s)
	var c run.PushConfig
	for _, x := range claimPush(t, s, "r1") {
		if x.Tenant == "tenant-a" {
			c = x
		}
	}
	task := getTask(t, a, s, "t-1")
	c.Delivered, c.ParkedVersion = 6, task.Version
	_, err := s.SavePushDelivery(a, c, pushTTL)
	wantNoError(t, err, "SavePushDelivery parking")
	got, err := s.GetPushConfig(a, "t-1", "p-1")
	wantNoError(t, err, "GetPushConfig")
	if got.ParkedVersion != task.Version || got.Delivered != 6 || got.Done {
		t.Errorf("parked config: %+v, want parked at version %d, cursor 6, not done", got, task.Version)
	}
	wantIDs(t, "configs claimed while the task has not moved", claimedKeys(claimPush(t, s, "r2")), []string{})

	upd := task
	upd.State = run.StateWorking
	apply(t, a, s, store.Change{TaskID: "t-1", UpdateTask: &upd})
	again := claimPush(t, s, "r2")
	wantIDs(t, "configs claimed once the task moved", claimedKeys(again), []string{"tenant-a/t-1/p-1"})
	if again[0].Delivered != 6 || again[0].ParkedVersion != task.Version {
		t.Errorf("reclaimed: cursor %d parked %d, want 6 and %d", again[0].Delivered, again[0].ParkedVersion, task.Version)
	}
	putPush(t, a, s, pushConfig("t-1", "p-1"))
	got, err = s.GetPushConfig(a, "t-1", "p-1")
	wantNoError(t, err, "GetPushConfig")
	if got.ParkedVersion != 0 {
		t.Errorf("a put left the config parked at %d", got.ParkedVersion)
	}
}

// testPushParkedStale: a config parked at a version its task already left
// (the task resumed between the deliverer's read and its save) is not
// left asleep: the next claim round takes it up — through SavePushDelivery
// and SavePushDeliveries alike.
func testPushParkedStale(t *testing.T, s store.Store) {
	a, _ := seedPush(t, s)
	var c run.PushConfig
	for _, x := range claimPush(t, s, "r1") {
		if x.Tenant == "tenant-a" {
			c = x
		}
	}
	for i, save := range []func(run.PushConfig) error{
		func(c run.PushConfig) error { _, err := s.SavePushDelivery(a, c, pushTTL); return err },
		func(c run.PushConfig) error {
			saved, err := s.SavePushDeliveries(a, []run.PushConfig{c}, pushTTL)
			if err == nil && !saved[0] {
				t.Errorf("SavePushDeliveries parking: not saved")
			}
			return err
		},
	} {
		stale := getTask(t, a, s, "t-1")
		upd := stale
		upd.State = run.StateWorking
		apply(t, a, s, store.Change{TaskID: "t-1", UpdateTask: &upd})
		c.ParkedVersion = stale.Version
		wantNoError(t, save(c), "parking at a stale version")
		again := claimPush(t, s, "r"+strconv.Itoa(i+2))
		wantIDs(t, "configs claimed after parking at a version the task left", claimedKeys(again), []string{"tenant-a/t-1/p-1"})
		if len(again) == 1 {
			c = again[0]
		}
	}
}
