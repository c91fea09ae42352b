package engine

import (
	"encoding/json"
	"testing"
)

// The effect key is the same for the same run, position and arguments
// (whatever their key order or spacing), and differs when any changes.
func TestEffectKeyIsStable(t *testing.T) {
	a := ArgsDigest(json.RawMessage(`{"amount": 3, "to": "x"}`))
	b := ArgsDigest(json.RawMessage(`{"to":"x","amount":3}`))
	if a != b {
		t.Fatalf("digests of the same arguments differ: %s %s", a, b)
	}
	k := EffectKey("run-1", "iter:1/call:c1", a)
	if k != EffectKey("run-1", "iter:1/call:c1", b) {
		t.Fatal("the key changed between attempts")
	}
	for _, other := range []string{
		EffectKey("run-2", "iter:1/call:c1", a),
		EffectKey("run-1", "iter:2/call:c1", a),
		EffectKey("run-1", "iter:1/call:c1", ArgsDigest(json.RawMessage(`{"amount":4,"to":"x"}`))),
	} {
		if other == k {
			t.Errorf("key %s shared by another call", k)
		}
	}
	if ArgsDigest(nil) != ArgsDigest(json.RawMessage(`{}`)) {
		t.Error("no arguments and {} digest differently")
	}
}
