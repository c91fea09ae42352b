package loop

import (
	"bytes"
	"encoding/json"
	"testing"
)

// detailTexts cover encoding/json's string escaping rules.
var detailTexts = []string{
	"", "stop", "tool_calls", "calc", "call_0_1", `q"uote\`, "<a>&", "\u2028\u2029", "\x00\x1f\t", "bad \xff", "é✓🎉",
}

func checkDetails(t *testing.T, n, calls int, s1, s2 string) {
	t.Helper()
	md := modelDetail{Iteration: n, ToolCalls: calls, FinishReason: s1, Model: s2, InputTokens: int64(n), OutputTokens: int64(calls) * 3}
	want, err := json.Marshal(md)
	if err != nil {
		t.Fatal(err)
	}
	if got := appendModelDetail(nil, md); !bytes.Equal(got, want) {
		t.Fatalf("appendModelDetail(%+v) = %s, want %s", md, got, want)
	}
	td := toolDetail{Iteration: n, Tool: s1, CallID: s2}
	if want, err = json.Marshal(td); err != nil {
		t.Fatal(err)
	}
	if got := appendToolDetail(nil, td); !bytes.Equal(got, want) {
		t.Fatalf("appendToolDetail(%+v) = %s, want %s", td, got, want)
	}
}

func TestDetailsAreWhatJSONEncodes(t *testing.T) {
	for _, n := range []int{0, 1, -3, 1 << 40} {
		for _, s1 := range detailTexts {
			for _, s2 := range detailTexts {
				checkDetails(t, n, n, s1, s2)
			}
		}
	}
}

func FuzzDetails(f *testing.F) {
	for _, s := range detailTexts {
		f.Add(1, 2, s, s)
	}
	f.Fuzz(checkDetails)
}
