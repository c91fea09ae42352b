package loop_test

import (
	"context"
	"encoding/json"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

var uuidV7 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// roles lists the roles of msgs, e.g. "user assistant tool assistant".
func roles(msgs []model.Message) string {
	out := make([]string, len(msgs))
	for i, m := range msgs {
		out[i] = string(m.Role)
	}
	return strings.Join(out, " ")
}

func TestTwoRoundCalculatorConversation(t *testing.T) {
	prov := &recordingProvider{inner: newScripted(t, calcRules()...)}
	eng := newEngine(t, loop.Config{Provider: prov, SystemPrompt: "You add things up."})
	host := enginetest.NewRecordingHost()
	out, err := execute(t, eng, engine.Run{ID: "run-calc"}, userBoard("what is 6*7?"), host)
	if err != nil {
		t.Fatalf("Execute: %v", err)
	}

	msgs := out.Channel(engine.MainChannel)
	if got, want := roles(msgs), "user assistant tool assistant"; got != want {
		t.Fatalf("main channel roles = %q, want %q", got, want)
	}
	calls := msgs[1].ToolCalls()
	if len(calls) != 1 || calls[0].Name != tool.CalculatorName || string(calls[0].Arguments) != `{"expression": "6*7"}` {
		t.Errorf("assistant tool calls = %+v, want one calculator call on 6*7", calls)
	}
	if msgs[1].Name != agentID {
		t.Errorf("assistant message Name = %q, want %q", msgs[1].Name, agentID)
	}
	res := msgs[2].Parts[0].ToolResult
	if res == nil || res.ToolCallID != calls[0].ID || res.Content != "42" || res.IsError {
		t.Errorf("tool message result = %+v, want 42 for call %q", res, calls[0].ID)
	}
	if got := msgs[3].Text(); got != "The answer is 42." {
		t.Errorf("final answer = %q", got)
	}
	ids := map[string]bool{}
	for i, m := range msgs[1:] {
		if !uuidV7.MatchString(m.ID) || ids[m.ID] {
			t.Errorf("appended message %d has id %q: want a fresh UUIDv7", i, m.ID)
		}
		ids[m.ID] = true
	}

	reqs := prov.requests()
	if len(reqs) != 2 {
		t.Fatalf("provider saw %d requests, want 2", len(reqs))
	}
	for i, r := range reqs {
		if r.Messages[0].Role != model.RoleSystem || r.Messages[0].Text() != "You add things up." {
			t.Errorf("request %d does not start with the system prompt: %+v", i, r.Messages[0])
		}
		if len(r.Tools) != 2 || r.Tools[0].Name != tool.CalculatorName {
			t.Errorf("request %d offers tools %+v, want calculator and counter", i, r.Tools)
		}
	}
	if got := roles(reqs[1].Messages); got != "system user assistant tool" {
		t.Errorf("second request roles = %q", got)
	}

	cps := host.Checkpoints()
	if len(cps) != 2 || cps[0].Step != "iter:1" || cps[1].Step != "iter:2" || cps[1].Iteration != 2 {
		t.Errorf("checkpoints = %v, want iter:1 and iter:2", steps(cps))
	}
	if u := host.Usage(); u.OutputTokens == 0 {
		t.Errorf("no usage reported: %+v", u)
	}
	checkStepKinds(t, host.Events(), []string{
		"start model", "complete model", "start tool", "complete tool", "start model", "complete model",
	})
}

func steps(cps []engine.Checkpoint) []string {
	out := make([]string, len(cps))
	for i, cp := range cps {
		out[i] = cp.Step
	}
	return out
}

// checkStepKinds compares the step events' verbs and kinds with want.
func checkStepKinds(t *testing.T, evs []engine.Event, want []string) {
	t.Helper()
	var got []string
	for _, ev := range evs {
		switch e := ev.(type) {
		case engine.StepStarted:
			got = append(got, "start "+e.Kind)
		case engine.StepCompleted:
			got = append(got, "complete "+e.Kind)
		case engine.StepFailed:
			got = append(got, "error "+e.Kind)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("step events = %q, want %q", got, want)
	}
}

func TestStreamDeltasInOrder(t *testing.T) {
	eng := newEngine(t, loop.Config{})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "run-say"}, userBoard("say it"), host); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var text strings.Builder
	tokens := 0
	for _, d := range deltas(t, host.Events()) {
		if d.Type != "token" || d.Actor != agentID {
			t.Errorf("delta %+v, want a token of %q", d, agentID)
		}
		text.WriteString(d.Content)
		tokens++
	}
	if text.String() != "alpha beta gamma delta" || tokens != 4 {
		t.Errorf("deltas spell %q in %d tokens, want the reply in 4", text.String(), tokens)
	}
}

func TestToolCallAndResultDeltas(t *testing.T) {
	eng := newEngine(t, loop.Config{})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "run-d"}, userBoard("what is 1+1?"), host); err != nil {
		t.Fatalf("Execute: %v", err)
	}
	var kinds []string
	for _, d := range deltas(t, host.Events()) {
		kinds = append(kinds, d.Type)
		if d.Type == "tool_result" && (d.Content != "2" || d.Name != tool.CalculatorName || d.ToolCallID == "") {
			t.Errorf("tool result delta = %+v", d)
		}
	}
	want := []string{"tool_call", "tool_result", "token", "token", "token", "token"}
	if !slices.Equal(kinds, want) {
		t.Errorf("delta types = %q, want %q", kinds, want)
	}
}

func TestMaxIterationsFailsClearly(t *testing.T) {
	cnt := &counter{}
	eng := newEngine(t, loop.Config{Tools: registry(t, cnt), MaxIterations: 3})
	host := enginetest.NewRecordingHost()
	out, err := execute(t, eng, engine.Run{ID: "run-loop"}, userBoard("loop"), host)
	if !errdefs.IsBudgetExceeded(err) {
		t.Fatalf("err = %v (class %q), want BudgetExceeded", err, errdefs.ClassOf(err))
	}
	if !strings.Contains(err.Error(), "reached max_iterations 3 without a final answer") {
		t.Errorf("err = %q, want it to say max_iterations 3 was reached without a final answer", err)
	}
	if n := cnt.calls.Load(); n != 3 {
		t.Errorf("counter ran %d times, want 3 (one per iteration)", n)
	}
	if got := roles(out.Channel(engine.MainChannel)); got != "user assistant tool assistant tool assistant tool" {
		t.Errorf("main channel roles = %q", got)
	}
	evs := host.Events()
	if last, ok := evs[len(evs)-1].(engine.ToolResult); !ok || last.Name != "counter" {
		t.Errorf("last event %s, want the third iteration's tool result: nothing after the budget is spent", enginetest.Describe(evs[len(evs)-1]))
	}
}

func TestBudgetExceededStopsBeforeTools(t *testing.T) {
	cnt := &counter{}
	eng := newEngine(t, loop.Config{Tools: registry(t, cnt)})
	host := enginetest.NewRecordingHost()
	host.UsageFn = func(total model.TokenUsage) error {
		return errdefs.BudgetExceededf("run budget of 1 token spent (%d used)", total.TotalTokens)
	}
	out, err := execute(t, eng, engine.Run{ID: "run-budget"}, userBoard("loop"), host)
	if !errdefs.IsBudgetExceeded(err) {
		t.Fatalf("err = %v, want BudgetExceeded", err)
	}
	if n := cnt.calls.Load(); n != 0 {
		t.Errorf("counter ran %d times after the budget was spent, want 0", n)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := roles(msgs); got != "user assistant tool" {
		t.Fatalf("main channel roles = %q, want the call answered without running", got)
	}
	if r := msgs[2].Parts[0].ToolResult; !r.IsError || !strings.Contains(r.Content, "not run") {
		t.Errorf("synthesised result = %+v, want an error saying the call was not run", r)
	}
	ds := deltas(t, host.Events())
	if last := ds[len(ds)-1]; last.Type != "tool_result" || !last.Cancelled {
		t.Errorf("last delta = %+v, want a cancelled tool result", last)
	}
}

func TestResumeAfterIterationOneDoesNotRerunTools(t *testing.T) {
	cnt := &counter{}
	reg := registry(t, cnt)
	cfg := loop.Config{Tools: reg, SpecVersion: "v1"}
	first := enginetest.NewRecordingHost()
	if _, err := execute(t, newEngine(t, cfg), engine.Run{ID: "run-resume"}, userBoard("count once"), first); err != nil {
		t.Fatalf("first Execute: %v", err)
	}
	cp := first.Checkpoints()[0]
	if cp.Step != "iter:1" || cp.SpecVersion != "v1" || cp.OriginalStartedAt.IsZero() {
		t.Fatalf("first checkpoint = step %q version %q started %v", cp.Step, cp.SpecVersion, cp.OriginalStartedAt)
	}
	if got := cnt.Keys(); !slices.Equal(got, []string{"run-resume:1:call_0_0"}) {
		t.Errorf("idempotency keys = %q, want run:iteration:call id", got)
	}

	second := enginetest.NewRecordingHost()
	run := engine.Run{ID: "run-resume", ResumeFrom: &cp}
	// The board argument is stale on purpose: the checkpoint's board wins.
	out, err := execute(t, newEngine(t, cfg), run, userBoard("something else"), second)
	if err != nil {
		t.Fatalf("resumed Execute: %v", err)
	}
	if n := cnt.calls.Load(); n != 1 {
		t.Errorf("counter ran %d times in all, want 1: the resume repeated a completed call", n)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := roles(msgs); got != "user assistant tool assistant" {
		t.Fatalf("resumed main channel roles = %q", got)
	}
	if got := msgs[3].Text(); got != "counted 1" {
		t.Errorf("final answer = %q, want %q", got, "counted 1")
	}
	if cps := second.Checkpoints(); len(cps) != 1 || cps[0].Step != "iter:2" || !cps[0].OriginalStartedAt.Equal(cp.OriginalStartedAt) {
		t.Errorf("resumed checkpoints = %v, want iter:2 keeping the original start time", steps(cps))
	}
}

func TestResumeRefusesSpecDrift(t *testing.T) {
	first := enginetest.NewRecordingHost()
	if _, err := execute(t, newEngine(t, loop.Config{SpecVersion: "v1"}), engine.Run{ID: "r"}, userBoard("what is 2+2?"), first); err != nil {
		t.Fatal(err)
	}
	cp := first.Checkpoints()[0]
	_, err := execute(t, newEngine(t, loop.Config{SpecVersion: "v2"}), engine.Run{ID: "r", ResumeFrom: &cp}, nil, nil)
	if !errdefs.IsConflict(err) {
		t.Errorf("resume across spec versions: err = %v, want a Conflict", err)
	}
}

func TestDisallowedAndFailingToolsBecomeResults(t *testing.T) {
	cnt := &counter{}
	rules := []scripted.Rule{
		calcRules()[1], // answer after the calculator
		scriptedRule("try", "counter", tool.CalculatorName),
	}
	eng := newEngine(t, loop.Config{
		Provider:  newScripted(t, rules...),
		Tools:     registry(t, cnt),
		ToolNames: []string{tool.CalculatorName},
	})
	host := enginetest.NewRecordingHost()
	out, err := execute(t, eng, engine.Run{ID: "run-deny"}, userBoard("try"), host)
	if err != nil {
		t.Fatalf("Execute: %v (tool failures must not fail the run)", err)
	}
	if n := cnt.calls.Load(); n != 0 {
		t.Errorf("a tool outside the allow-list ran %d times", n)
	}
	msgs := out.Channel(engine.MainChannel)
	if got := roles(msgs); got != "user assistant tool tool assistant" {
		t.Fatalf("main channel roles = %q", got)
	}
	denied, failed := msgs[2].Parts[0].ToolResult, msgs[3].Parts[0].ToolResult
	if !denied.IsError || !strings.Contains(denied.Content, "not available to this agent") {
		t.Errorf("denied call result = %+v", denied)
	}
	if !failed.IsError || !strings.HasPrefix(failed.Content, "calculator:") {
		t.Errorf("failing calculator result = %+v", failed)
	}
	checkStepKinds(t, host.Events(), []string{
		"start model", "complete model", "start tool", "start tool", "error tool", "error tool",
		"start model", "complete model",
	})
}

// scriptedRule calls each named tool once (the calculator with a bad
// expression) when the user message starts with prefix.
func scriptedRule(prefix string, names ...string) scripted.Rule {
	r := scripted.Rule{Prefix: prefix}
	for _, n := range names {
		r.ToolCalls = append(r.ToolCalls, scripted.ToolCall{Name: n, Arguments: json.RawMessage(`{"expression": "1/"}`)})
	}
	return r
}

func TestFailedCheckpointFailsTheRun(t *testing.T) {
	rec := enginetest.NewRecordingHost()
	host := enginetest.HostFuncs{Inner: rec, CheckpointFn: func(context.Context, engine.Checkpoint) error {
		return errdefs.NotAvailablef("checkpoint store down")
	}}
	_, err := newEngine(t, loop.Config{}).Execute(t.Context(), engine.Run{ID: "run-cp"}, host, userBoard("what is 3*3?"))
	if !errdefs.IsNotAvailable(err) || !strings.Contains(err.Error(), "checkpoint after iteration 1") {
		t.Errorf("err = %v, want the store's NotAvailable naming the iteration", err)
	}
	for _, d := range deltas(t, rec.Events()) {
		if d.Type == "token" {
			t.Errorf("token %q streamed: the run went on without its checkpoint", d.Content)
		}
	}
}

func TestMessageIDsComeFromConfig(t *testing.T) {
	n := 0
	eng := newEngine(t, loop.Config{NewMessageID: func() string { n++; return "m" + strconv.Itoa(n) }})
	out, err := execute(t, eng, engine.Run{ID: "run-ids"}, userBoard("what is 1+2?"), nil)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, m := range out.Channel(engine.MainChannel)[1:] {
		ids = append(ids, m.ID)
	}
	if want := []string{"m1", "m2", "m3"}; !slices.Equal(ids, want) {
		t.Errorf("appended message ids = %q, want %q", ids, want)
	}
}

// Only the final answer's checkpoint is staged (engine.CheckpointStager):
// the one before a tool call must be durable before the tool runs, so that
// a crash never runs it twice; the last is saved with the run's end.
func TestOnlyTheFinalAnswersCheckpointIsStaged(t *testing.T) {
	eng := newEngine(t, loop.Config{Provider: newScripted(t, calcRules()...)})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "run-stage"}, userBoard("what is 6*7?"), host); err != nil {
		t.Fatal(err)
	}
	var steps []string
	for _, cp := range host.Checkpoints() {
		steps = append(steps, cp.Step)
	}
	if len(steps) != 2 {
		t.Fatalf("checkpoints %v, want one per iteration (tool call, answer)", steps)
	}
	if staged := host.Staged(); !slices.Equal(staged, steps[1:]) {
		t.Fatalf("staged %v of checkpoints %v, want only the answer's", staged, steps)
	}
}
