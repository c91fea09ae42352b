package loop_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/llm/scripted"
	"agentd/internal/model"
	"agentd/internal/tool"
)

var update = flag.Bool("update", false, "rewrite testdata/*.golden")

// goldenHost records, in one log, every envelope, usage report and
// checkpoint an engine hands it, encoded the moment it arrives. It keeps
// the checkpoints too, so the test can check that a retained checkpoint
// does not change while the run goes on.
type goldenHost struct {
	*enginetest.RecordingHost
	mu    sync.Mutex
	log   bytes.Buffer
	cps   []engine.Checkpoint
	encCP []string
}

func (h *goldenHost) Publish(ctx context.Context, ev engine.Event) error {
	b, err := json.Marshal(ev)
	if err != nil {
		return err
	}
	h.mu.Lock()
	fmt.Fprintf(&h.log, "event %s\n  %T %s", enginetest.Describe(ev), ev, b)
	if f, ok := ev.(engine.StepFailed); ok {
		fmt.Fprintf(&h.log, " error=%q", f.Err)
	}
	h.log.WriteByte('\n')
	h.mu.Unlock()
	return h.RecordingHost.Publish(ctx, ev)
}

func (h *goldenHost) ReportUsage(_ context.Context, _ string, u model.TokenUsage) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(&h.log, "usage %+v\n", u)
	return nil
}

func (h *goldenHost) Checkpoint(_ context.Context, cp engine.Checkpoint) error {
	enc := encodeCheckpoint(cp)
	h.mu.Lock()
	defer h.mu.Unlock()
	fmt.Fprintf(&h.log, "checkpoint %s\n", enc)
	h.cps = append(h.cps, cp)
	h.encCP = append(h.encCP, enc)
	return nil
}

// StageCheckpoint records a staged checkpoint as any other: the golden
// file is about what the engine records, not when the host writes it.
func (h *goldenHost) StageCheckpoint(ctx context.Context, cp engine.Checkpoint) error {
	return h.Checkpoint(ctx, cp)
}

// encodeCheckpoint is cp as JSON with its clock readings zeroed.
func encodeCheckpoint(cp engine.Checkpoint) string {
	if cp.Timestamp.IsZero() || cp.OriginalStartedAt.IsZero() {
		return "checkpoint without timestamps"
	}
	cp.Timestamp, cp.OriginalStartedAt = time.Time{}, time.Time{}
	if cp.Board != nil {
		b := *cp.Board
		b.Channels = zeroTimes(b.Channels)
		cp.Board = &b
	}
	out, err := json.Marshal(cp)
	if err != nil {
		return "unencodable checkpoint: " + err.Error()
	}
	return string(out)
}

// zeroTimes copies channels with every CreatedAt checked and zeroed.
func zeroTimes(channels map[string][]model.Message) map[string][]model.Message {
	out := make(map[string][]model.Message, len(channels))
	for name, msgs := range channels {
		cp := make([]model.Message, len(msgs))
		for i, m := range msgs {
			if (m.Role == model.RoleAssistant || m.Role == model.RoleTool) && m.CreatedAt.IsZero() {
				m.Name += " (no created_at)"
			}
			m.CreatedAt = time.Time{}
			cp[i] = m
		}
		out[name] = cp
	}
	return out
}

// goldenCase is one Execute whose every observable output is compared
// with testdata/loop.golden.
type goldenCase struct {
	name  string
	cfg   loop.Config
	run   engine.Run
	text  string
	setup func(b *engine.Board)
	// interrupt, when set, is fired once the first token is out.
	interrupt *engine.Interrupt
}

func goldenCases(t *testing.T) []goldenCase {
	temp := 0.5
	echo := []scripted.Rule{
		{Match: `^stream (\d+) every (\d+)ms$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}, Delay: "{{index .Groups 2}}ms"},
		{Match: `^stream (\d+)$`, Count: &scripted.Count{Number: "{{index .Groups 1}}"}},
		{Match: `(?s).*`, Reply: "{{.Text}}"},
	}
	fancy := []scripted.Rule{
		{Prefix: "meta", Reply: "run {{.Metadata.run_id}} agent {{index .Metadata \"agent_id\"}} turn {{.Turn}}"},
		{Match: `^(?P<first>\w+) (?P<rest>.*)$`, Reply: "{{.Named.first}}|{{index .Groups 2}}|{{upper .Text}}|{{json .Text}}", Split: "chars"},
	}
	return []goldenCase{
		{name: "echo", cfg: loop.Config{Provider: newScripted(t, echo...), MaxIterations: 1, AgentID: "echo", ToolNames: []string{}},
			run: engine.Run{ID: "run-echo", Attributes: map[string]string{"agent_id": "echo", "task_id": "t1"}}, text: "hello world"},
		{name: "echo escaping", cfg: loop.Config{Provider: newScripted(t, echo...), MaxIterations: 1, ToolNames: []string{}},
			run:  engine.Run{ID: "run.with dots>*", Attributes: map[string]string{"agent_id": "echo.node.n1"}},
			text: "  <b>\"quoted\" & \\back\u2028sep\u2029 \x01ctl\t é \xff  "},
		{name: "echo stream count", cfg: loop.Config{Provider: newScripted(t, echo...), MaxIterations: 1, AgentID: "a b.iter3"},
			run: engine.Run{ID: "run-count"}, text: "stream 5"},
		{name: "templates", cfg: loop.Config{Provider: newScripted(t, fancy...), AgentID: "fancy", SystemPrompt: "be fancy",
			Temperature: &temp, MaxTokens: 9, Model: "m1", SpecVersion: "v2"},
			run: engine.Run{ID: "run-tmpl"}, text: "hello <wörld> & more",
			setup: func(b *engine.Board) { b.SetVar("k", map[string]any{"a": []any{1.0, "x"}}) }},
		{name: "metadata", cfg: loop.Config{Provider: newScripted(t, fancy...), AgentID: "fancy"},
			run: engine.Run{ID: "run-meta"}, text: "meta"},
		{name: "calculator", cfg: loop.Config{SystemPrompt: "You add things up."},
			run: engine.Run{ID: "run-calc", ParentRunID: "parent"}, text: "what is 6*7?"},
		{name: "denied and failing tools", cfg: loop.Config{
			Provider:  newScripted(t, calcRules()[1], scriptedRule("try", "counter", tool.CalculatorName)),
			ToolNames: []string{tool.CalculatorName}},
			run: engine.Run{ID: "run-deny"}, text: "try"},
		{name: "max iterations", cfg: loop.Config{MaxIterations: 2}, run: engine.Run{ID: "run-loop"}, text: "loop"},
		{name: "no rule", cfg: loop.Config{}, run: engine.Run{ID: "run-norule"}, text: "nothing matches <this>"},
		{name: "interrupt", cfg: loop.Config{}, run: engine.Run{ID: "run-block"}, text: "block",
			interrupt: &engine.Interrupt{Cause: engine.CauseUserInput, Detail: "barge-in"}},
	}
}

// TestGoldenOutputs pins the bytes of everything the loop produces —
// envelopes, payloads, checkpoints, requests, results — for a set of
// runs, so that optimisations cannot change them.
func TestGoldenOutputs(t *testing.T) {
	var all bytes.Buffer
	for _, c := range goldenCases(t) {
		fmt.Fprintf(&all, "=== %s\n", c.name)
		all.WriteString(runGolden(t, c))
	}
	path := filepath.Join("testdata", "loop.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, all.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if got := all.String(); got != string(want) {
		gotPath := filepath.Join(t.TempDir(), "loop.golden")
		_ = os.WriteFile(gotPath, all.Bytes(), 0o644)
		t.Errorf("outputs differ from %s; got written to %s", path, gotPath)
	}
}

func runGolden(t *testing.T, c goldenCase) string {
	n := 0
	c.cfg.NewMessageID = func() string { n++; return "msg-" + strconv.Itoa(n) }
	prov := &recordingProvider{inner: c.cfg.Provider}
	if prov.inner == nil {
		prov.inner = newScripted(t, calcRules()...)
	}
	c.cfg.Provider = prov
	eng := newEngine(t, c.cfg)
	host := &goldenHost{RecordingHost: enginetest.NewRecordingHost()}
	board := userBoard(c.text)
	if c.setup != nil {
		c.setup(board)
	}
	type outcome struct {
		board *engine.Board
		err   error
	}
	done := make(chan outcome, 1)
	go func() {
		b, err := eng.Execute(t.Context(), c.run, host, board)
		done <- outcome{b, err}
	}()
	if c.interrupt != nil {
		waitFor(t, host.RecordingHost, "the first token", isToken)
		host.Fire(*c.interrupt)
	}
	res := <-done

	var out bytes.Buffer
	out.Write(host.log.Bytes())
	for i, r := range prov.requests() {
		msgs := zeroTimes(map[string][]model.Message{"m": r.Messages})["m"]
		enc, err := json.Marshal(struct {
			Model       string
			Messages    []model.Message
			Tools       []llm.ToolSpec
			Temperature *float64
			MaxTokens   int
			Metadata    map[string]string
		}{r.Model, msgs, r.Tools, r.Temperature, r.MaxTokens, r.Metadata})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "request %d %s\n", i, enc)
	}
	fmt.Fprintf(&out, "result same_board=%v err=%v class=%v\n", res.board == board, res.err, errdefs.ClassOf(res.err))
	snap := res.board.Snapshot()
	snap.Channels = zeroTimes(snap.Channels)
	enc, err := json.Marshal(snap)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&out, "board %s\n", enc)
	for i, cp := range host.cps {
		if got := encodeCheckpoint(cp); got != host.encCP[i] {
			t.Errorf("%s: checkpoint %d changed after it was taken:\n got %s\nwant %s", c.name, i, got, host.encCP[i])
		}
	}
	return out.String()
}
