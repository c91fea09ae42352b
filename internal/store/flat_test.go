package store_test

import (
	"encoding/json"
	"math"
	"reflect"
	"testing"

	"agentd/internal/store"
)

// TestFlat checks Flat against an encoding/json round trip.
func TestFlat(t *testing.T) {
	for _, m := range []map[string]any{
		nil, {}, {"a": "x", "b": 1.5, "c": true, "d": nil}, {"a": "\xff"}, {"\xff": 1.0},
		{"a": math.NaN()}, {"a": math.Inf(1)}, {"a": 1}, {"a": []any{"x"}}, {"a": map[string]any{}},
	} {
		b, err := json.Marshal(m)
		var back map[string]any
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		same := err == nil && reflect.DeepEqual(back, m) || err == nil && len(m) == 0
		if got := store.Flat(m); got && !same {
			t.Errorf("store.Flat(%#v) = true, but a round trip gives %#v (%v)", m, back, err)
		}
	}
	if !store.Flat(map[string]any{"a": "x", "b": 1.5, "c": true, "d": nil}) || store.Flat(map[string]any{"a": 1}) {
		t.Error("Flat misjudges a plain map or an int")
	}
}
