package engine_test

import (
	"errors"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

type suggester struct {
	engine.EngineFunc
	asked bool
}

func (s *suggester) SuggestCheckpoint() error { s.asked = true; return errors.New("busy") }

func TestSuggestCheckpoint(t *testing.T) {
	s := &suggester{}
	if err := engine.SuggestCheckpoint(s); err == nil || !s.asked {
		t.Errorf("suggestion did not reach the engine (err %v)", err)
	}
	if err := engine.SuggestCheckpoint(engine.EngineFunc(nil)); err != nil {
		t.Errorf("SuggestCheckpoint on a non-suggester = %v, want nil", err)
	}
}

func TestValidateResume(t *testing.T) {
	if err := engine.ValidateResume(engine.Run{ID: "r"}); err != nil {
		t.Errorf("no ResumeFrom: %v", err)
	}
	run := engine.Run{ID: "r", ResumeFrom: &engine.Checkpoint{ExecID: "x", Board: &engine.BoardSnapshot{}}}
	if err := engine.ValidateResume(run); !errdefs.IsValidation(err) {
		t.Errorf("foreign exec id: %v", err)
	}
	if err := engine.ResumeUnsupported(run); !errdefs.IsNotAvailable(err) {
		t.Errorf("ResumeUnsupported: %v", err)
	}
}

// A checkpoint of another configuration version is refused as
// NotAvailable (another replica may run it); an unversioned side accepts.
func TestCheckSpecVersion(t *testing.T) {
	cp := engine.Checkpoint{ExecID: "r", Step: "s", SpecVersion: "2"}
	if err := engine.CheckSpecVersion("loop", cp, "3"); !errdefs.IsConflict(err) || !strings.Contains(err.Error(), `loop checkpoint of run "r"`) {
		t.Fatalf("another version: %v, want NotAvailable naming the engine and run", err)
	}
	for _, running := range []string{"2", ""} {
		if err := engine.CheckSpecVersion("loop", cp, running); err != nil {
			t.Errorf("running %q: %v, want accepted", running, err)
		}
	}
	cp.SpecVersion = ""
	if err := engine.CheckSpecVersion("loop", cp, "3"); err != nil {
		t.Errorf("an unversioned checkpoint: %v, want accepted", err)
	}
}
