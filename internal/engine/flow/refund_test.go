package flow_test

import (
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// refundEngine builds the demo's refund flow (internal/config/flows) over
// a fresh demo shop.
func refundEngine(t *testing.T, opts tool.DemoShopOptions) (*flow.Engine, *tool.DemoShop) {
	t.Helper()
	shop := tool.NewDemoShop(opts)
	reg := &tool.Registry{}
	for _, tl := range shop.Tools() {
		mustRegister(t, reg, tl)
	}
	spec, err := flow.Load(os.DirFS("../../config/flows"), "refund")
	if err != nil {
		t.Fatal(err)
	}
	return newEngine(t, compileSpec(t, spec, reg), reg), shop
}

// The refund demo walked through a runtime-like host that parks at every
// question: the event sequences are golden files.
func TestRefundDemoGolden(t *testing.T) {
	tests := []struct {
		name     string
		opts     tool.DemoShopOptions
		answers  []string
		class    string // "" for success
		issued   int
		canceled int
		said     string // in the last message
	}{
		{name: "refunded", answers: []string{"A-1001", "damaged", "yes"}, issued: 1, said: "on its way to\nAda Lovelace"},
		{name: "unknown-order", answers: []string{"Z-1", "a-1003", "3", ""}, issued: 1, said: "Grace Hopper"},
		{name: "declined", answers: []string{"A-1001", "late", "n"}, said: "Nothing was refunded"},
		{name: "notify-bounces", answers: []string{"A-1002", "wrong item", "y"}, class: "not_available", issued: 1, canceled: 1, said: "Issuing the refund"},
		{name: "notify-switched-off", opts: tool.DemoShopOptions{FailNotify: true}, answers: []string{"A-1001", "other", "yes"}, class: "not_available", issued: 1, canceled: 1, said: "Issuing the refund"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			eng, shop := refundEngine(t, tc.opts)
			h := newParkingHost()
			board, used, err := converse(t, eng, h, "run-"+tc.name, "I want a refund", tc.answers...)
			if used != len(tc.answers) {
				t.Fatalf("used %d of %d answers (err %v)", used, len(tc.answers), err)
			}
			if got := string(errdefs.ClassOf(err)); got != tc.class {
				t.Fatalf("err = %v (class %q), want class %q", err, got, tc.class)
			}
			if issued, canceled, _ := shop.Counts(); issued != tc.issued || canceled != tc.canceled {
				t.Errorf("refunds issued %d canceled %d, want %d and %d", issued, canceled, tc.issued, tc.canceled)
			}
			if s := said(board); len(s) == 0 || !strings.Contains(s[len(s)-1], tc.said) {
				t.Errorf("said %q, want the last to contain %q", s, tc.said)
			}
			golden(t, filepath.Join("testdata", "refund-"+tc.name+".golden"), trail(h))
		})
	}
}

func golden(t *testing.T, path, got string) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Errorf("%s differs (run with -update to accept):\n--- got\n%s", path, got)
	}
}

// A run that dies after issue_refund ran and before the checkpoint that
// follows it resumes at the refund node with the same idempotency key:
// the shop counts one refund.
func TestRefundReplayAfterCrashKeepsOneEffect(t *testing.T) {
	eng, shop := refundEngine(t, tool.DemoShopOptions{})
	h := newParkingHost()
	crashed := false
	die := context.Canceled
	dying := &crashingHost{parkingHost: h, crashAt: "node:notify", crashed: &crashed, err: die}
	_, _, err := converse(t, eng, dying.parkingHost, "run-crash", "refund please", "A-1001", "damaged")
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("err = %v, want the run parked at the confirmation", err)
	}
	// Answer yes on a host whose checkpoint store dies at the notify node.
	h.mu.Lock()
	h.reply = replyOf("yes")
	h.mu.Unlock()
	cps := h.Checkpoints()
	cp := cps[len(cps)-1]
	if _, err := execute(t, eng, engine.Run{ID: "run-crash", ResumeFrom: &cp}, engine.NewBoard(), dying); err == nil || !crashed {
		t.Fatalf("err = %v, crashed = %v: want the attempt to die at its checkpoint", err, crashed)
	}
	// A new replica resumes from the last checkpoint written: the refund
	// node, with its call pending.
	cps = h.Checkpoints()
	last := cps[len(cps)-1]
	if last.Step != "node:refund" || !strings.Contains(string(last.Payload), `"pending_tool_call":{"tool":"issue_refund","idempotency_key":"run-crash:refund:1"}`) {
		t.Fatalf("last checkpoint %s %s", last.Step, last.Payload)
	}
	if _, err := execute(t, eng, engine.Run{ID: "run-crash", ResumeFrom: &last}, engine.NewBoard(), h); err != nil {
		t.Fatal(err)
	}
	if issued, _, notified := shop.Counts(); issued != 1 || notified != 1 {
		t.Errorf("issued %d refunds and sent %d notices, want 1 and 1", issued, notified)
	}
	if !strings.Contains(trail(h), `"idempotency_key":"run-crash:refund:1","replay":true`) {
		t.Errorf("the replayed call is not marked as a replay")
	}
}

// crashingHost fails the checkpoint at step crashAt, like a replica that
// dies before writing it.
type crashingHost struct {
	*parkingHost
	crashAt string
	crashed *bool
	err     error
}

func (h *crashingHost) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	if cp.Step == h.crashAt {
		*h.crashed = true
		return h.err
	}
	return h.parkingHost.Checkpoint(ctx, cp)
}
