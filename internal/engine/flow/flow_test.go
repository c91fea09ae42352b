package flow_test

import (
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
)

// The confirm demo as Trellis documents it: input_default "no" makes
// Enter a refusal, on_denied takes it; yes takes to.
func TestConfirmRoutes(t *testing.T) {
	tests := []struct {
		answers []string
		want    string // last thing said
		saved   string
		prompts int
	}{
		{answers: []string{""}, want: "Refused path!", saved: "no", prompts: 1},
		{answers: []string{"Y"}, want: "Accepted!", saved: "yes", prompts: 1},
		{answers: []string{"true"}, want: "Accepted!", saved: "yes", prompts: 1},
		{answers: []string{"0"}, want: "Refused path!", saved: "no", prompts: 1},
		{answers: []string{"maybe", "yes"}, want: "Accepted!", saved: "yes", prompts: 2},
	}
	for _, tc := range tests {
		t.Run(strings.Join(tc.answers, ","), func(t *testing.T) {
			eff := &effects{}
			reg := registry(t, eff)
			eng := newEngine(t, compile(t, "confirm", reg), reg)
			h := enginetest.NewRecordingHost()
			h.AskUserFn = replies(tc.answers...)
			out, err := execute(t, eng, engine.Run{ID: "r"}, userBoard("go"), h)
			if err != nil {
				t.Fatal(err)
			}
			if s := said(out); len(s) != 1 || s[0] != tc.want {
				t.Errorf("said %q, want %q", s, tc.want)
			}
			ctx, _ := finalContext(t, h)
			if ctx["proceed"] != tc.saved {
				t.Errorf("proceed = %v, want %q", ctx["proceed"], tc.saved)
			}
			ps := h.Prompts()
			if len(ps) != tc.prompts {
				t.Fatalf("%d prompts, want %d", len(ps), tc.prompts)
			}
			if last := ps[len(ps)-1].Parts[0].Text; tc.prompts > 1 && !strings.Contains(last, `"maybe" is not yes or no`) {
				t.Errorf("re-asked without the reason: %q", last)
			}
		})
	}
}

// default_context values are in the context when the wait node renders.
func TestDefaultContextRendered(t *testing.T) {
	reg := registry(t, &effects{})
	eng := newEngine(t, compile(t, "defaults", reg), reg)
	h := enginetest.NewRecordingHost()
	h.AskUserFn = replies("")
	if _, err := execute(t, eng, engine.Run{ID: "r"}, userBoard("hi"), h); err != nil {
		t.Fatal(err)
	}
	q := h.Prompts()[0].Parts[0].Text
	for _, want := range []string{"API URL: http://localhost:8080", "Role: guest", "Retries: 3", "Debug: true", "Nickname: friend"} {
		if !strings.Contains(q, want) {
			t.Errorf("question lacks %q:\n%s", want, q)
		}
	}
}

// The native SAGA booking: hotel and flight succeed, the car fails with
// on_error: rollback; the flight then the hotel are cancelled, with the
// ids their actions saved, and the run fails naming the car.
func TestBookingRollsBackInReverse(t *testing.T) {
	eff := &effects{}
	reg := registry(t, eff, "rent_car")
	eng := newEngine(t, compile(t, "booking", reg), reg)
	h := enginetest.NewRecordingHost()
	_, err := execute(t, eng, engine.Run{ID: "trip"}, userBoard("book"), h)
	if err == nil || !strings.Contains(err.Error(), `node "03_car": tool rent_car failed`) {
		t.Fatalf("err = %v, want the car's failure", err)
	}
	if errdefs.ClassOf(err) != errdefs.ClassInternal {
		t.Errorf("class %q", errdefs.ClassOf(err))
	}
	want := []string{
		"reserve_hotel trip:01_hotel:1", "book_flight trip:02_flight:1", "rent_car trip:03_car:1",
		"cancel_flight trip:02_flight:1:undo", "cancel_hotel trip:01_hotel:1:undo",
	}
	if got := eff.all(); strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("calls:\n got %q\nwant %q", got, want)
	}
	ctx, hist := finalContext(t, h)
	if strings.Join(hist, ",") != "start,01_hotel,02_flight,03_car" {
		t.Errorf("history %q", hist)
	}
	if ctx["hotel"].(map[string]any)["id"] != "HTL-1" {
		t.Errorf("context %v", ctx)
	}
}
