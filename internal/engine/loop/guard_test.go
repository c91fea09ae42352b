package loop_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

// lastToolResult is the content of the last tool result on board.
func lastToolResult(t *testing.T, b *engine.Board) string {
	t.Helper()
	msgs := b.ChannelView(engine.MainChannel)
	for i := len(msgs) - 1; i >= 0; i-- {
		for _, p := range msgs[i].Parts {
			if p.ToolResult != nil {
				return p.ToolResult.Content
			}
		}
	}
	t.Fatal("no tool result on the board")
	return ""
}

// verdicts returns the governance events' payloads.
func verdicts(t *testing.T, h *enginetest.RecordingHost) []map[string]any {
	t.Helper()
	var out []map[string]any
	for _, ev := range h.Events() {
		if e, ok := ev.(engine.Verdict); ok {
			var v map[string]any
			if err := json.Unmarshal(e.Payload, &v); err != nil {
				t.Fatal(err)
			}
			out = append(out, v)
		}
	}
	return out
}

type governorFunc func(ctx context.Context, p loop.Proposal) (loop.Review, error)

func (f governorFunc) Review(ctx context.Context, p loop.Proposal) (loop.Review, error) {
	return f(ctx, p)
}

func TestGovernanceVerdicts(t *testing.T) {
	silent := governorFunc(func(ctx context.Context, _ loop.Proposal) (loop.Review, error) {
		<-ctx.Done()
		return loop.Review{}, ctx.Err()
	})
	failing := governorFunc(func(context.Context, loop.Proposal) (loop.Review, error) {
		return loop.Review{}, errors.New("policy store offline")
	})
	denying := governorFunc(func(_ context.Context, p loop.Proposal) (loop.Review, error) {
		if p.Tool != tool.CalculatorName || !strings.Contains(string(p.Arguments), `"2+2"`) || p.Iteration != 1 {
			return loop.Review{}, errors.New("unexpected proposal")
		}
		return loop.Review{Verdict: "deny", Reason: "no sums today"}, nil
	})
	for _, c := range []struct {
		name   string
		gov    loop.Governance
		result string // what the model reads
	}{
		{"no rule matches", loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{{Tool: "clock", Verdict: "deny"}}}, "4"},
		{"a rule denies", loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{
			{Name: "no plus", Tool: "calc*", When: `args.expression.contains("+")`, Verdict: "deny"}}}, "calculator: denied by policy: no plus"},
		{"the first rule wins", loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{
			{Tool: "calculator", Verdict: "allow"}, {Verdict: "deny"}}}, "4"},
		{"an unevaluable condition denies", loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{
			{Name: "by size", When: `args.size > 3`, Verdict: "allow"}}}, "calculator: denied by policy: by size (its condition could not be evaluated"},
		{"audit blocks nothing", loop.Governance{Mode: "audit", Rules: []loop.GovernanceRule{{Verdict: "deny"}}}, "4"},
		{"a silent governor denies", loop.Governance{Mode: "enforce", Governor: silent, GovernorTimeout: 20 * time.Millisecond},
			"calculator: denied by policy: governor (no verdict within 20ms)"},
		{"a failing governor denies", loop.Governance{Mode: "enforce", Governor: failing}, "calculator: denied by policy: governor (governor failed: policy store offline)"},
		{"a governor's deny", loop.Governance{Mode: "enforce", Governor: denying}, "calculator: denied by policy: governor (no sums today)"},
		{"audit with a silent governor", loop.Governance{Mode: "audit", Governor: silent, GovernorTimeout: 20 * time.Millisecond}, "4"},
	} {
		t.Run(c.name, func(t *testing.T) {
			eng := newEngine(t, loop.Config{Governance: c.gov})
			h := enginetest.NewRecordingHost()
			b, err := execute(t, eng, engine.Run{ID: "r1"}, userBoard("what is 2+2?"), h)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastToolResult(t, b); !strings.HasPrefix(got, c.result) {
				t.Fatalf("tool result %q, want %q…", got, c.result)
			}
			vs := verdicts(t, h)
			if len(vs) != 1 || vs[0]["call_id"] == "" || vs[0]["mode"] != c.gov.Mode || vs[0]["enforced"] != (c.gov.Mode == "enforce") {
				t.Fatalf("governance events %v, want one for the call", vs)
			}
		})
	}
}

func TestGovernanceConfigErrors(t *testing.T) {
	for _, c := range []struct {
		gov  loop.Governance
		want string
	}{
		{loop.Governance{Mode: "strict"}, `governance.mode "strict"`},
		{loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{{Verdict: "maybe"}}}, `governance.rules[0]: verdict "maybe"`},
		{loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{{Verdict: "deny", When: "args.path.("}}}, `governance.rules[0]: when "args.path.("`},
		{loop.Governance{Mode: "enforce", Rules: []loop.GovernanceRule{{Verdict: "deny", When: `"text"`}}}, "not a bool"},
		{loop.Governance{Mode: "audit", Rules: []loop.GovernanceRule{{Verdict: "deny", Tool: "[bad"}}}, `tool "[bad"`},
	} {
		err := loop.CheckGovernance("loop agent \"a\"", c.gov)
		if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want a Validation error with %q", c.gov, err, c.want)
		}
	}
	_, err := loop.New(loop.Config{Provider: newScripted(t, calcRules()...), Tools: registry(t, &counter{}),
		ToolNames: []string{tool.CalculatorName}, ApprovalTools: []string{"counter"}})
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), `"counter" is not one of the agent's tools`) {
		t.Errorf("approval of a tool the agent lacks: %v", err)
	}
}

// parkingHost answers every prompt by parking the run, as the runtime does.
func parkingHost() *enginetest.RecordingHost {
	h := enginetest.NewRecordingHost()
	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{}, engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
	}
	return h
}

// replyHost answers the first prompt with reply (or err), then parks.
func replyHost(reply engine.UserReply, err error) *enginetest.RecordingHost {
	h := parkingHost()
	asked := false
	park := h.AskUserFn
	h.AskUserFn = func(ctx context.Context, p engine.UserPrompt) (engine.UserReply, error) {
		if asked {
			return park(ctx, p)
		}
		asked = true
		return reply, err
	}
	return h
}

func approvals(t *testing.T, answers ...engine.ApprovalAnswer) engine.UserReply {
	t.Helper()
	p, err := model.DataPart(map[string]any{"approvals": answers})
	if err != nil {
		t.Fatal(err)
	}
	return engine.UserReply{Parts: []model.Part{p}}
}

// parkedCheckpoint runs eng on text until it parks for approval and returns
// the checkpoint it parked at and the prompt.
func parkedCheckpoint(t *testing.T, eng *loop.Engine, text string) (engine.Checkpoint, engine.UserPrompt) {
	t.Helper()
	h := parkingHost()
	b, err := execute(t, eng, engine.Run{ID: "r1"}, userBoard(text), h)
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("first attempt: %v, want it parked", err)
	}
	for _, m := range b.ChannelView(engine.MainChannel) {
		if len(m.ToolCalls()) > 0 {
			t.Fatal("a call waiting for approval is on the board")
		}
	}
	cps, prompts := h.Checkpoints(), h.Prompts()
	if len(prompts) != 1 || len(engine.PendingApprovals(prompts[0].Parts)) == 0 {
		t.Fatalf("prompts %+v, want one approval prompt", prompts)
	}
	return cps[len(cps)-1], prompts[0]
}

// resume continues the parked run from cp on h.
func resume(t *testing.T, eng *loop.Engine, cp engine.Checkpoint, h *enginetest.RecordingHost) (*engine.Board, error) {
	t.Helper()
	return execute(t, eng, engine.Run{ID: "r1", ResumeFrom: &cp}, engine.NewBoard(), h)
}

func TestApprovals(t *testing.T) {
	now := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	clock := func() time.Time { return now }
	for _, c := range []struct {
		name    string
		reply   func(callID string) engine.UserReply
		err     error
		later   time.Duration // the clock moves on before the answer
		result  string
		counted bool
	}{
		{"approve", func(id string) engine.UserReply {
			return approvals(t, engine.ApprovalAnswer{CallID: id, Decision: "approve"})
		}, nil, 0, "1", true},
		{"approve in words", func(string) engine.UserReply { return engine.UserReply{Parts: []model.Part{model.TextPart("Yes")}} }, nil, 0, "1", true},
		{"reject with a reason", func(id string) engine.UserReply {
			return approvals(t, engine.ApprovalAnswer{CallID: id, Decision: "reject", Reason: "not now"})
		}, nil, 0, "counter: rejected by the user: not now", false},
		{"edit", func(id string) engine.UserReply {
			return approvals(t, engine.ApprovalAnswer{CallID: id, Decision: "edit", Arguments: json.RawMessage(`{"n":2}`)})
		}, nil, 0, "1", true},
		{"the host says the prompt expired", func(string) engine.UserReply { return engine.UserReply{} },
			errdefs.Timeoutf("expired"), 0, "counter: rejected: not approved within the approval timeout of 1m0s", false},
		{"an answer after the deadline", func(id string) engine.UserReply {
			return approvals(t, engine.ApprovalAnswer{CallID: id, Decision: "approve"})
		},
			nil, 2 * time.Minute, "counter: rejected: not approved within the approval timeout of 1m0s", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			now = time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
			cnt := &counter{}
			eng := newEngine(t, loop.Config{Tools: registry(t, cnt), ToolNames: []string{"counter"}, ApprovalTools: []string{"counter"},
				ApprovalTimeout: time.Minute, Now: clock})
			if caps := eng.Capabilities(); !caps.EmitsUserPrompt || !caps.PromptDeadlines {
				t.Fatalf("capabilities %+v, want prompts with deadlines", caps)
			}
			cp, prompt := parkedCheckpoint(t, eng, "count once")
			if prompt.Metadata[engine.PromptDeadlineKey] != now.Add(time.Minute).Format(time.RFC3339Nano) {
				t.Fatalf("prompt metadata %v, want the deadline", prompt.Metadata)
			}
			call := engine.PendingApprovals(prompt.Parts)[0]
			now = now.Add(c.later)
			h := replyHost(c.reply(call.CallID), c.err)
			b, err := resume(t, eng, cp, h)
			if err != nil {
				t.Fatal(err)
			}
			if got := lastToolResult(t, b); got != c.result {
				t.Fatalf("tool result %q, want %q", got, c.result)
			}
			if (cnt.calls.Load() == 1) != c.counted {
				t.Fatalf("the tool ran %d times", cnt.calls.Load())
			}
			msgs := b.ChannelView(engine.MainChannel)
			if last := msgs[len(msgs)-1]; last.Role != model.RoleAssistant || !strings.HasPrefix(last.Text(), "counted ") {
				t.Fatalf("last message %+v, want the final answer", last)
			}
			if c.name == "edit" {
				if got := string(msgs[1].ToolCalls()[0].Arguments); got != `{"n":2}` {
					t.Fatalf("the board's call has arguments %s, want the edited ones", got)
				}
				if keys := cnt.Keys(); len(keys) != 1 || keys[0] != loop.IdempotencyKey("r1", 1, call.CallID) {
					t.Fatalf("idempotency keys %v", keys)
				}
			}
		})
	}
}

// An answer that is not understood, or that leaves calls undecided, asks
// again: the run parks with the rest pending, its decisions kept in the
// new checkpoint.
func TestApprovalsAskAgain(t *testing.T) {
	cnt := &counter{}
	double := newScripted(t,
		scripted.Rule{Prefix: "two", ToolCalls: []scripted.ToolCall{{Name: "counter"}, {Name: "counter"}}},
		scripted.Rule{Prefix: "two", AfterTool: "*", Reply: "done"})
	eng := newEngine(t, loop.Config{Provider: double, Tools: registry(t, cnt), ToolNames: []string{"counter"}, ApprovalTools: []string{"counter"}})
	cp, prompt := parkedCheckpoint(t, eng, "two")
	pending := engine.PendingApprovals(prompt.Parts)
	if len(pending) != 2 {
		t.Fatalf("pending %+v, want both calls", pending)
	}

	h := replyHost(engine.UserReply{Parts: []model.Part{model.TextPart("perhaps")}}, nil)
	if _, err := resume(t, eng, cp, h); !errdefs.IsInterrupted(err) {
		t.Fatalf("after a vague answer: %v, want parked again", err)
	}
	if p := h.Prompts(); len(p) != 2 || !strings.Contains(p[1].Parts[0].Text, `Your answer "perhaps" was not understood`) {
		t.Fatalf("prompts %+v, want the question again with the reason", p)
	}

	h = replyHost(approvals(t, engine.ApprovalAnswer{CallID: pending[0].CallID, Decision: "reject"}), nil)
	if _, err := resume(t, eng, cp, h); !errdefs.IsInterrupted(err) {
		t.Fatalf("after a partial answer: %v, want parked again", err)
	}
	cps := h.Checkpoints()
	cp = cps[len(cps)-1]
	if rest := engine.PendingApprovals(h.Prompts()[1].Parts); len(rest) != 1 || rest[0].CallID != pending[1].CallID {
		t.Fatalf("asked again for %+v, want the second call alone", rest)
	}

	h = replyHost(approvals(t, engine.ApprovalAnswer{CallID: pending[1].CallID, Decision: "approve"}), nil)
	b, err := resume(t, eng, cp, h)
	if err != nil {
		t.Fatal(err)
	}
	var results []string
	for _, m := range b.ChannelView(engine.MainChannel) {
		for _, p := range m.Parts {
			if p.ToolResult != nil {
				results = append(results, p.ToolResult.Content)
			}
		}
	}
	if strings.Join(results, "|") != "counter: rejected by the user|1" || cnt.calls.Load() != 1 {
		t.Fatalf("results %q, %d runs; want the first rejected, the second run once", results, cnt.calls.Load())
	}
}

// A host that cannot ask fails the run rather than running the call.
func TestApprovalWithoutAUser(t *testing.T) {
	cnt := &counter{}
	eng := newEngine(t, loop.Config{Tools: registry(t, cnt), ToolNames: []string{"counter"}, ApprovalTools: []string{"counter"}})
	_, err := execute(t, eng, engine.Run{ID: "r1"}, userBoard("count once"), nil)
	if !errdefs.IsNotAvailable(err) || cnt.calls.Load() != 0 {
		t.Fatalf("%v (%d runs), want NotAvailable and no run", err, cnt.calls.Load())
	}
}

// The calls of one turn are reviewed concurrently: a governor that answers
// only once it holds all three reviews at once allows them all (asked one
// at a time, the first would wait for the others until its timeout and be
// denied). The verdicts are recorded in the calls' order.
func TestGovernorReviewsATurnConcurrently(t *testing.T) {
	const n = 3
	var mu sync.Mutex
	arrived, all := 0, make(chan struct{})
	barrier := governorFunc(func(ctx context.Context, _ loop.Proposal) (loop.Review, error) {
		mu.Lock()
		if arrived++; arrived == n {
			close(all)
		}
		mu.Unlock()
		select {
		case <-all:
			return loop.Review{Verdict: "allow"}, nil
		case <-ctx.Done():
			return loop.Review{}, ctx.Err()
		}
	})
	cnt := &counter{}
	calls := []scripted.ToolCall{{Name: "counter"}, {Name: "counter"}, {Name: "counter"}}
	rules := []scripted.Rule{{Prefix: "three", ToolCalls: calls}, {AfterTool: "*", Reply: "done"}}
	eng := newEngine(t, loop.Config{Provider: newScripted(t, rules...), Tools: registry(t, cnt),
		Governance: loop.Governance{Mode: "enforce", Governor: barrier, GovernorTimeout: 2 * time.Second}})
	host := enginetest.NewRecordingHost()
	if _, err := execute(t, eng, engine.Run{ID: "r-gov-par"}, userBoard("three"), host); err != nil {
		t.Fatal(err)
	}
	if got := cnt.calls.Load(); got != n {
		t.Fatalf("%d of %d calls ran; the governor's reviews were not concurrent", got, n)
	}
	var ids []string
	for _, v := range verdicts(t, host) {
		if v["verdict"] != "allow" || v["source"] != "governor" {
			t.Fatalf("verdict %v, want the governor's allow", v)
		}
		ids = append(ids, v["call_id"].(string))
	}
	if !slices.IsSorted(ids) || len(ids) != n {
		t.Fatalf("verdicts recorded for calls %q, want %d in the calls' order", ids, n)
	}
}
