package storetest

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// base is a microsecond-precise instant, so that times survive every store
// unchanged.
var base = time.Date(2025, 3, 14, 15, 9, 26, 535897000, time.UTC)

// at returns base plus i seconds.
func at(i int) time.Time { return base.Add(time.Duration(i) * time.Second) }

// clockSlack bounds how far a store's clock may be from the test's when the
// suite checks a timestamp the store set; it only catches gross errors
// (zero, wrong unit, wrong field).
const clockSlack = time.Minute

// waitLimit bounds every wait for time to pass (an expired lease).
const waitLimit = 10 * time.Second

func tenantCtx(t *testing.T, tenant string) context.Context {
	return run.WithTenant(t.Context(), tenant)
}

func sortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// apply applies c and fails the test on error.
func apply(t *testing.T, ctx context.Context, s store.Store, c store.Change) {
	t.Helper()
	if err := s.Apply(ctx, c); err != nil {
		t.Fatalf("Apply(%s): got error %v, want success", describe(c), err)
	}
}

// describe summarises a change for failure messages.
func describe(c store.Change) string {
	var parts []string
	if c.Idempotency != nil {
		parts = append(parts, fmt.Sprintf("key %s/%s", c.Idempotency.ContextID, c.Idempotency.MessageID))
	}
	if c.CreateTask != nil {
		parts = append(parts, "create task "+c.CreateTask.ID)
	}
	if c.UpdateTask != nil {
		parts = append(parts, fmt.Sprintf("update task %s@v%d", c.UpdateTask.ID, c.UpdateTask.Version))
	}
	if len(c.Messages) > 0 {
		parts = append(parts, fmt.Sprintf("%d messages", len(c.Messages)))
	}
	if len(c.Events) > 0 {
		parts = append(parts, fmt.Sprintf("%d events", len(c.Events)))
	}
	if len(parts) == 0 {
		return "empty change"
	}
	return strings.Join(parts, ", ")
}

// wantClass fails unless err is classified as want.
func wantClass(t *testing.T, err error, want errdefs.Class, op string) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: got nil error, want a %s error", op, want)
	}
	if got := errdefs.ClassOf(err); got != want {
		t.Fatalf("%s: got %s error %q, want class %s", op, got, err, want)
	}
}

// wantNoError fails on err.
func wantNoError(t *testing.T, err error, op string) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: got error %v, want success", op, err)
	}
}

// wantRecent fails unless got was set by a clock close to the test's,
// between before and after (with clockSlack either side).
func wantRecent(t *testing.T, what string, got, before, after time.Time) {
	t.Helper()
	if got.IsZero() || got.Before(before.Add(-clockSlack)) || got.After(after.Add(clockSlack)) {
		t.Fatalf("%s = %v, want the store's clock at the time of the call (about %v)", what, got, before)
	}
}

// wantSameJSON compares got and want by their JSON encodings, decoded, so
// that key order, number types and nil-versus-empty omitted fields do not
// matter. Callers normalise times first.
func wantSameJSON(t *testing.T, what string, got, want any) {
	t.Helper()
	g, w := canonical(t, got), canonical(t, want)
	if !jsonValuesEqual(g, w) {
		t.Fatalf("%s differs:\n got: %s\nwant: %s", what, marshal(t, got), marshal(t, want))
	}
}

func canonical(t *testing.T, v any) any {
	t.Helper()
	var out any
	if err := json.Unmarshal(marshal(t, v), &out); err != nil {
		t.Fatalf("decode %T: %v", v, err)
	}
	return out
}

func marshal(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// jsonValuesEqual compares decoded JSON values (maps, slices, scalars).
func jsonValuesEqual(a, b any) bool {
	switch a := a.(type) {
	case map[string]any:
		b, ok := b.(map[string]any)
		return ok && maps.EqualFunc(a, b, jsonValuesEqual)
	case []any:
		b, ok := b.([]any)
		return ok && slices.EqualFunc(a, b, jsonValuesEqual)
	default:
		return a == b
	}
}

// micro returns t in UTC truncated to the microsecond.
func micro(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// eventually polls cond until it holds or waitLimit passes. It waits for
// the passage of time itself (an expiry), for which there is no event.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	tick := time.NewTicker(time.Millisecond)
	defer tick.Stop()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: still not the case after %v", what, waitLimit)
		}
		<-tick.C
	}
}
