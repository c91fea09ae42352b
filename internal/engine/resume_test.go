package engine_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// memStore is a one-run CheckpointStore for the LoadAndResume tests.
type memStore struct {
	cp  *engine.Checkpoint
	err error
}

func (s *memStore) Save(_ context.Context, cp engine.Checkpoint) error { s.cp = &cp; return nil }
func (s *memStore) Load(context.Context, string) (*engine.Checkpoint, error) {
	return s.cp, s.err
}

// probe records what LoadAndResume handed to Execute.
type probe struct {
	caps    engine.Capabilities
	refuse  error
	called  bool
	run     engine.Run
	rc      engine.ResumeContext
	rcFound bool
}

func (p *probe) Execute(ctx context.Context, run engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
	p.called, p.run = true, run
	p.rc, p.rcFound = engine.ResumeContextFromContext(ctx)
	return b, nil
}
func (p *probe) Capabilities() engine.Capabilities { return p.caps }
func (p *probe) CanResume(engine.Checkpoint) error { return p.refuse }

func TestLoadAndResume(t *testing.T) {
	started := time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)
	cpAt := started.Add(time.Minute)
	own := &engine.Checkpoint{ExecID: "r1", Step: "s2", Board: &engine.BoardSnapshot{}, Timestamp: cpAt, OriginalStartedAt: started}
	resumable := engine.Capabilities{SupportsResume: true}

	tests := []struct {
		name      string
		store     engine.CheckpointStore
		caps      engine.Capabilities
		refuse    error
		opts      []engine.LoadAndResumeOption
		wantClass errdefs.Class
		wantRun   bool
		check     func(t *testing.T, p *probe)
	}{
		{name: "nil store starts fresh", store: nil, wantRun: true, check: func(t *testing.T, p *probe) {
			if p.run.ResumeFrom != nil || p.rc.Attempt != 1 || p.rc.Signal != engine.SignalManual || p.rc.Resumed() {
				t.Errorf("fresh start got ResumeFrom=%v rc=%+v", p.run.ResumeFrom, p.rc)
			}
		}},
		{name: "no checkpoint, fresh start refused", store: &memStore{},
			opts: []engine.LoadAndResumeOption{engine.WithFreshStartAllowed(false)}, wantClass: errdefs.ClassNotFound},
		{name: "own checkpoint resumes", store: &memStore{cp: own}, caps: resumable, wantRun: true,
			opts: []engine.LoadAndResumeOption{engine.WithResumeSignal(engine.SignalCrash)},
			check: func(t *testing.T, p *probe) {
				if p.run.ResumeFrom != own {
					t.Errorf("ResumeFrom = %v, want the loaded checkpoint", p.run.ResumeFrom)
				}
				want := engine.ResumeContext{Attempt: 2, StartedAt: started, Signal: engine.SignalCrash, CheckpointAt: cpAt, Step: "s2"}
				if !p.rcFound || p.rc != want {
					t.Errorf("ResumeContext = %+v (found %v), want %+v", p.rc, p.rcFound, want)
				}
			}},
		{name: "explicit attempt and start", store: &memStore{cp: own}, caps: resumable, wantRun: true,
			opts: []engine.LoadAndResumeOption{engine.WithResumeAttempt(5), engine.WithResumeStartedAt(cpAt)},
			check: func(t *testing.T, p *probe) {
				if p.rc.Attempt != 5 || !p.rc.StartedAt.Equal(cpAt) {
					t.Errorf("ResumeContext = %+v", p.rc)
				}
			}},
		{name: "foreign exec id", store: &memStore{cp: &engine.Checkpoint{ExecID: "other", Board: &engine.BoardSnapshot{}}},
			caps: resumable, wantClass: errdefs.ClassValidation},
		{name: "checkpoint without board", store: &memStore{cp: &engine.Checkpoint{ExecID: "r1"}},
			caps: resumable, wantClass: errdefs.ClassValidation},
		{name: "engine cannot resume", store: &memStore{cp: own}, wantClass: errdefs.ClassNotAvailable},
		{name: "resumer refuses", store: &memStore{cp: own}, caps: resumable,
			refuse: errdefs.NotAvailablef("spec drifted"), wantClass: errdefs.ClassNotAvailable},
		{name: "store fails", store: &memStore{err: errdefs.Internalf("disk on fire")}, wantClass: errdefs.ClassInternal},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := &probe{caps: tt.caps, refuse: tt.refuse}
			_, err := engine.LoadAndResume(t.Context(), p, nil, tt.store, engine.Run{ID: "r1"}, nil, tt.opts...)
			if got := errdefs.ClassOf(err); got != tt.wantClass {
				t.Fatalf("error %v has class %q, want %q", err, got, tt.wantClass)
			}
			if p.called != tt.wantRun {
				t.Fatalf("Execute called = %v, want %v", p.called, tt.wantRun)
			}
			if tt.check != nil {
				tt.check(t, p)
			}
		})
	}
}

func TestOptionalInterfacesSeenThroughWrappers(t *testing.T) {
	p := &probe{refuse: errdefs.Validationf("no")}
	wrapped := engine.WithCapabilities(engine.WithCapabilities(p, engine.Capabilities{EmitsCheckpoint: true}),
		engine.Capabilities{SupportsResume: true})

	if !engine.IsResumable(wrapped) {
		t.Errorf("IsResumable through two wrappers = false")
	}
	if r, _ := engine.AsResumer(wrapped); r == nil || !errdefs.IsValidation(r.CanResume(engine.Checkpoint{})) {
		t.Errorf("AsResumer did not reach the wrapped engine")
	}
	if caps := engine.CapabilitiesOf(wrapped); !caps.SupportsResume || caps.EmitsCheckpoint {
		t.Errorf("CapabilitiesOf = %+v, want the outermost declaration", caps)
	}
	if caps := engine.CapabilitiesOf(engine.EngineFunc(p.Execute)); caps.SupportsResume || caps.EmitsCheckpoint {
		t.Errorf("CapabilitiesOf a plain func = %+v, want zero", caps)
	}
	if engine.IsResumable(engine.EngineFunc(p.Execute)) {
		t.Errorf("a plain func is resumable")
	}
}

type suggester struct {
	engine.EngineFunc
	asked bool
}

func (s *suggester) SuggestCheckpoint() error { s.asked = true; return errors.New("busy") }

func TestSuggestCheckpoint(t *testing.T) {
	s := &suggester{}
	if err := engine.SuggestCheckpoint(engine.WithCapabilities(s, engine.Capabilities{})); err == nil || !s.asked {
		t.Errorf("suggestion did not reach the wrapped engine (err %v)", err)
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
