package engine_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/event"
)

// pubRecorder records envelopes; with strict set it refuses publishes on
// a done context, as a bus with OverflowBlock may.
type pubRecorder struct {
	mu     sync.Mutex
	envs   []event.Envelope
	strict bool
}

func (p *pubRecorder) Publish(ctx context.Context, env event.Envelope) error {
	if p.strict && ctx.Err() != nil {
		return ctx.Err()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.envs = append(p.envs, env)
	return nil
}

func (p *pubRecorder) last(t *testing.T) event.Envelope {
	t.Helper()
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.envs) == 0 {
		t.Fatal("nothing published")
	}
	return p.envs[len(p.envs)-1]
}

func TestEmitValidatesPerType(t *testing.T) {
	tests := []struct {
		name    string
		payload engine.StreamDeltaPayload
		ok      bool
	}{
		{"token", engine.StreamDeltaPayload{Type: engine.StreamDeltaToken, Content: "hi"}, true},
		{"empty token", engine.StreamDeltaPayload{Type: engine.StreamDeltaToken}, false},
		{"tool call", engine.StreamDeltaPayload{Type: engine.StreamDeltaToolCall, ID: "c1", Name: "clock"}, true},
		{"tool call without id", engine.StreamDeltaPayload{Type: engine.StreamDeltaToolCall, Name: "clock"}, false},
		{"tool call without name", engine.StreamDeltaPayload{Type: engine.StreamDeltaToolCall, ID: "c1"}, false},
		{"tool result", engine.StreamDeltaPayload{Type: engine.StreamDeltaToolResult, ToolCallID: "c1"}, true},
		{"tool result without call id", engine.StreamDeltaPayload{Type: engine.StreamDeltaToolResult, Content: "x"}, false},
		{"no type", engine.StreamDeltaPayload{Content: "x"}, false},
		{"future type", engine.StreamDeltaPayload{Type: "reasoning", Content: "x"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pub := &pubRecorder{}
			err := engine.EmitStreamDelta(t.Context(), pub, "r1", "echo", tt.payload)
			if tt.ok {
				if err != nil {
					t.Fatalf("emit: %v", err)
				}
				if _, err := engine.DecodeStreamDelta(pub.last(t)); err != nil {
					t.Errorf("decode what was emitted: %v", err)
				}
				return
			}
			if !errdefs.IsValidation(err) || len(pub.envs) != 0 {
				t.Errorf("emit = %v with %d published, want a Validation error and nothing published", err, len(pub.envs))
			}
		})
	}
}

func TestEmitStampsRoutingFields(t *testing.T) {
	pub := &pubRecorder{}
	ctx := t.Context()
	if err := engine.EmitStreamToolCall(ctx, pub, "run.1", engine.NodeActor("planner", "fetch"), "c1", "http_get", map[string]any{"url": "x"}); err != nil {
		t.Fatal(err)
	}
	env := pub.last(t)
	if env.Subject != "engine.run.run_1.stream.planner_node_fetch.delta" {
		t.Errorf("subject %q", env.Subject)
	}
	if env.RunID != "run.1" || env.AgentID != "planner" || env.NodeID != "fetch" || env.Time.IsZero() {
		t.Errorf("stamped RunID=%q AgentID=%q NodeID=%q Time=%v", env.RunID, env.AgentID, env.NodeID, env.Time)
	}
	d, err := engine.DecodeStreamDelta(env)
	if err != nil || d.ID != "c1" || d.Name != "http_get" || d.Arguments.(map[string]any)["url"] != "x" {
		t.Errorf("decoded %+v, %v", d, err)
	}

	if err := engine.EmitStreamToolResult(ctx, pub, "r", engine.IterActor("loop", 2), "c1", "http_get", "", true, true); err != nil {
		t.Fatal(err)
	}
	env = pub.last(t)
	if env.AgentID != "loop" || env.NodeID != "" {
		t.Errorf("iteration actor stamped AgentID=%q NodeID=%q", env.AgentID, env.NodeID)
	}
	if d, _ := engine.DecodeStreamDelta(env); !d.IsError || !d.Cancelled || d.ToolCallID != "c1" {
		t.Errorf("decoded %+v", d)
	}
	if err := engine.EmitStreamToken(ctx, pub, "r", "a", "tok"); err != nil {
		t.Fatal(err)
	}
	if d, _ := engine.DecodeStreamDelta(pub.last(t)); d.Type != engine.StreamDeltaToken || d.Content != "tok" {
		t.Errorf("decoded %+v", d)
	}
}

func TestDecodeStreamDeltaRejectsMalformed(t *testing.T) {
	for _, payload := range []string{"", "{", `{"type":"token"}`, `[1]`} {
		env := event.Envelope{Subject: engine.SubjectStreamDelta("r", "a"), Payload: json.RawMessage(payload)}
		if _, err := engine.DecodeStreamDelta(env); !errdefs.IsValidation(err) {
			t.Errorf("payload %q: %v, want Validation", payload, err)
		}
	}
}

func TestRunStatusOf(t *testing.T) {
	tests := []struct {
		err  error
		want engine.RunStatus
	}{
		{nil, engine.RunCompleted},
		{engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserCancel}), engine.RunInterrupted},
		{context.Canceled, engine.RunCanceled},
		{errdefs.Aborted(errors.New("hard cancel")), engine.RunCanceled},
		{context.DeadlineExceeded, engine.RunFailed},
		{errdefs.BudgetExceededf("tokens"), engine.RunFailed},
		{errors.New("boom"), engine.RunFailed},
	}
	for _, tt := range tests {
		if got := engine.RunStatusOf(tt.err); got != tt.want {
			t.Errorf("RunStatusOf(%v) = %q, want %q", tt.err, got, tt.want)
		}
	}
}

func TestLifecyclePayloads(t *testing.T) {
	pub := &pubRecorder{strict: true}
	run := engine.Run{ID: "r1", ParentRunID: "p", Attributes: map[string]string{event.HeaderAgentID: "echo"},
		ResumeFrom: &engine.Checkpoint{ExecID: "r1", Step: "s3"}}
	ctx := engine.WithResumeContext(t.Context(), engine.ResumeContext{Attempt: 2, Signal: engine.SignalCrash})
	if err := engine.PublishRunStart(ctx, pub, run); err != nil {
		t.Fatal(err)
	}
	start := pub.last(t)
	var sp engine.RunStartPayload
	if err := json.Unmarshal(start.Payload, &sp); err != nil {
		t.Fatal(err)
	}
	want := engine.RunStartPayload{RunID: "r1", ParentRunID: "p", Attempt: 2, Signal: engine.SignalCrash, Resumed: true, ResumeStep: "s3"}
	if sp != want || start.AgentID != "echo" || start.Subject != engine.SubjectRunStart("r1") {
		t.Errorf("run.start %+v agent %q subject %q", sp, start.AgentID, start.Subject)
	}

	// run.end is published even when ctx is already cancelled.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	runErr := engine.Interrupted(engine.Interrupt{Cause: engine.CauseUserInput, Detail: "barge-in"})
	if err := engine.PublishRunEnd(cctx, pub, run, runErr); err != nil {
		t.Fatalf("run.end on a cancelled ctx: %v", err)
	}
	end, err := engine.DecodeRunEnd(pub.last(t))
	wantEnd := engine.RunEndPayload{RunID: "r1", Status: engine.RunInterrupted, Error: runErr.Error(),
		ErrorClass: errdefs.ClassInterrupted, Cause: engine.CauseUserInput}
	if err != nil || end != wantEnd {
		t.Errorf("run.end %+v, %v; want %+v", end, err, wantEnd)
	}
}

func TestStepPayloads(t *testing.T) {
	pub := &pubRecorder{}
	step := engine.StepInfo{Actor: engine.NodeActor("wf", "n1"), Kind: "node", Detail: map[string]int{"try": 2}}
	ctx := t.Context()
	_ = engine.PublishStepStart(ctx, pub, "r1", step)
	_ = engine.PublishStepComplete(ctx, pub, "r1", step)
	_ = engine.PublishStepError(ctx, pub, "r1", step, errdefs.Timeoutf("step n1 timed out"))
	wantSubjects := []event.Subject{
		engine.SubjectStepStart("r1", step.Actor), engine.SubjectStepComplete("r1", step.Actor), engine.SubjectStepError("r1", step.Actor),
	}
	for i, env := range pub.envs {
		if env.Subject != wantSubjects[i] || env.AgentID != "wf" || env.NodeID != "n1" {
			t.Errorf("event %d: subject %q agent %q node %q", i, env.Subject, env.AgentID, env.NodeID)
		}
	}
	var p engine.StepPayload
	if err := json.Unmarshal(pub.last(t).Payload, &p); err != nil {
		t.Fatal(err)
	}
	if p.Actor != "wf.node.n1" || p.Kind != "node" || string(p.Detail) != `{"try":2}` ||
		p.ErrorClass != errdefs.ClassTimeout || p.Error != "step n1 timed out" {
		t.Errorf("step.error payload %+v", p)
	}
	if err := engine.PublishStepStart(ctx, pub, "r1", engine.StepInfo{Actor: "a", Detail: func() {}}); !errdefs.IsValidation(err) {
		t.Errorf("unencodable detail: %v", err)
	}
}

// framingRecorder is a publisher that frames runs itself.
type framingRecorder struct{ pubRecorder }

func (*framingRecorder) FramesRuns() bool { return true }

// A publisher that frames runs itself gets no run start or end from the
// helpers, and still every other event.
func TestRunFramerGetsNoLifecycle(t *testing.T) {
	pub := &framingRecorder{}
	run := engine.Run{ID: "r1"}
	if err := engine.PublishRunStart(t.Context(), pub, run); err != nil {
		t.Fatal(err)
	}
	if err := engine.PublishStepStart(t.Context(), pub, run.ID, engine.StepInfo{Actor: "a", Kind: "model"}); err != nil {
		t.Fatal(err)
	}
	if err := engine.PublishRunEnd(t.Context(), pub, run, nil); err != nil {
		t.Fatal(err)
	}
	if len(pub.envs) != 1 || pub.envs[0].Subject != engine.SubjectStepStart(run.ID, "a") {
		t.Fatalf("published %v, want only the step start", pub.envs)
	}
}
