package flow_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// A compensation that fails is surfaced — a step.error of kind undo, and
// in the run's error next to the action's — and the compensations before
// it in the unwinding still run.
func TestFailingCompensationIsSurfaced(t *testing.T) {
	eff := &effects{}
	reg := registry(t, eff, "rent_car", "cancel_flight")
	eng := newEngine(t, compile(t, "booking", reg), reg)
	h := enginetest.NewRecordingHost()
	_, err := execute(t, eng, engine.Run{ID: "trip"}, userBoard("book"), h)
	for _, want := range []string{
		`node "03_car": tool rent_car failed`,
		`compensation failed: node "02_flight": undo cancel_flight failed: cancel_flight service unavailable`,
	} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v, want it to contain %q", err, want)
		}
	}
	if errdefs.ClassOf(err) != errdefs.ClassInternal {
		t.Errorf("class %q", errdefs.ClassOf(err))
	}
	if got := strings.Join(eff.tools(), ","); got != "reserve_hotel,book_flight,rent_car,cancel_flight,cancel_hotel" {
		t.Errorf("calls %s: the hotel must be cancelled after the flight's undo failed", got)
	}
	trail := strings.Join(stepTrail(h.Events()), "|")
	if !strings.Contains(trail, "error undo 02_flight|start undo 01_hotel|complete undo 01_hotel") {
		t.Errorf("step trail %s", trail)
	}
}

// A rollback interrupted by a crash resumes where it was: the undo
// already done is not repeated, the one pending is repeated with its key.
func TestRollbackResumesWithoutRepeating(t *testing.T) {
	eff := &effects{}
	reg := registry(t, eff, "rent_car")
	eng := newEngine(t, compile(t, "booking", reg), reg)
	h := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "trip"}, userBoard("book"), h); err == nil {
		t.Fatal("the booking succeeded")
	}
	// The checkpoint written after the flight's compensation: resuming
	// from it must only cancel the hotel.
	var from *engine.Checkpoint
	for _, cp := range h.Checkpoints() {
		var st struct {
			Done []json.RawMessage `json:"done"`
			RB   *json.RawMessage  `json:"rollback"`
			P    *json.RawMessage  `json:"pending_tool_call"`
		}
		_ = json.Unmarshal(cp.Payload, &st)
		if st.RB != nil && len(st.Done) == 1 && st.P == nil {
			from = &cp
			break
		}
	}
	if from == nil {
		t.Fatal("no checkpoint between the two compensations")
	}
	before := len(eff.all())
	if _, err := execute(t, eng, engine.Run{ID: "trip", ResumeFrom: from}, engine.NewBoard(), enginetest.NewRecordingHost()); err == nil || !strings.Contains(err.Error(), "rent_car failed") {
		t.Fatalf("resumed rollback: err = %v", err)
	}
	if got := eff.all()[before:]; strings.Join(got, ",") != "cancel_hotel trip:01_hotel:1:undo" {
		t.Errorf("resumed rollback called %q", got)
	}
}

// The tools reach the engine's host through their context and see the
// idempotency key of their call.
func TestToolsSeeHostAndKey(t *testing.T) {
	reg := &tool.Registry{}
	var key string
	var hosted bool
	mustRegister(t, reg, tool.New(tool.Spec{Name: "probe", Description: "probe"}, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		c, _ := tool.CallFromContext(ctx)
		key = c.IdempotencyKey
		_, hosted = engine.HostFromContext(ctx)
		return tool.Text("ok"), nil
	}))
	spec, err := flow.ParseFile([]byte("nodes:\n  - {id: start, do: probe, to: again}\n  - {id: again, content: x}\n"), "probe")
	if err != nil {
		t.Fatal(err)
	}
	eng := newEngine(t, compileSpec(t, spec, reg), reg)
	if _, err := execute(t, eng, engine.Run{ID: "run-7"}, userBoard("x"), enginetest.NewRecordingHost()); err != nil {
		t.Fatal(err)
	}
	if key != "run-7:start:1" || !hosted {
		t.Errorf("key %q, host attached %v", key, hosted)
	}
}
