package storetest

import (
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// testReplicas checks store.Replicas, for stores that implement it.
func testReplicas(t *testing.T, f Factory) {
	subtests(t, f, map[string]func(*testing.T, store.Store){
		"PutGet":     testReplicaPutGet,
		"Validation": testReplicaInvalid,
	})
}

func replicasOf(t *testing.T, s store.Store) store.Replicas {
	t.Helper()
	r, ok := s.(store.Replicas)
	if !ok {
		t.Skip("the store does not record replicas")
	}
	return r
}

func testReplicaPutGet(t *testing.T, s store.Store) {
	rs, ctx := replicasOf(t, s), t.Context()
	if _, err := rs.GetReplica(ctx, "r1"); !errdefs.IsNotFound(err) {
		t.Fatalf("GetReplica of an unknown replica: %v, want NotFound", err)
	}
	wantNoError(t, rs.PutReplica(ctx, store.Replica{ID: "r1", URL: "http://127.0.0.1:1"}), "PutReplica")
	wantNoError(t, rs.PutReplica(ctx, store.Replica{ID: "r1", URL: "http://127.0.0.1:2"}), "PutReplica again")
	got, err := rs.GetReplica(ctx, "r1")
	wantNoError(t, err, "GetReplica")
	if got.ID != "r1" || got.URL != "http://127.0.0.1:2" || got.SeenAt.IsZero() {
		t.Fatalf("GetReplica: %+v, want r1 at its latest URL, seen", got)
	}
}

func testReplicaInvalid(t *testing.T, s store.Store) {
	rs, ctx := replicasOf(t, s), t.Context()
	for _, r := range []store.Replica{{URL: "http://127.0.0.1:1"}, {ID: "r", URL: "127.0.0.1:1"}, {ID: "r", URL: "ftp://h/"}} {
		if err := rs.PutReplica(ctx, r); !errdefs.IsValidation(err) {
			t.Errorf("PutReplica(%+v): %v, want Validation", r, err)
		}
	}
}
