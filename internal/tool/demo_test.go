package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/tool"
)

func demoRegistry(t *testing.T, opts tool.DemoShopOptions) (*tool.Registry, *tool.DemoShop) {
	t.Helper()
	shop := tool.NewDemoShop(opts)
	reg := &tool.Registry{}
	for _, tl := range shop.Tools() {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	return reg, shop
}

func call(reg *tool.Registry, name, args, key string) tool.Result {
	return reg.Execute(context.Background(), tool.Call{ID: "c", Name: name, Arguments: json.RawMessage(args), IdempotencyKey: key})
}

// A refund replayed with the same key is the same refund: one effect.
func TestDemoRefundIsIdempotent(t *testing.T) {
	reg, shop := demoRegistry(t, tool.DemoShopOptions{})
	first := call(reg, tool.IssueRefundName, `{"order_id":"A-1001","reason":"damaged"}`, "run:refund:1")
	again := call(reg, tool.IssueRefundName, `{"order_id":"a-1001","reason":"damaged"}`, "run:refund:1")
	other := call(reg, tool.IssueRefundName, `{"order_id":"A-1001"}`, "run:refund:2")
	if first.IsError || first.Content != again.Content || other.Content == first.Content {
		t.Fatalf("first %+v\nagain %+v\nother %+v", first, again, other)
	}
	if issued, _, _ := shop.Counts(); issued != 2 {
		t.Errorf("issued %d refunds, want 2", issued)
	}
	var r struct {
		ID string `json:"refund_id"`
	}
	_ = json.Unmarshal(first.Data, &r)
	for range 2 {
		if res := call(reg, tool.CancelRefundName, `{"refund_id":"`+r.ID+`"}`, "k:undo"); res.IsError {
			t.Fatalf("cancel: %+v", res)
		}
	}
	if _, cancelled, _ := shop.Counts(); cancelled != 1 {
		t.Errorf("cancelled %d, want 1", cancelled)
	}
}

func TestDemoTools(t *testing.T) {
	tests := []struct {
		name       string
		opts       tool.DemoShopOptions
		tool, args string
		wantErr    string // "" for success
		want       string
	}{
		{name: "known order", tool: tool.LookupOrderName, args: `{"order_id":"A-1003"}`, want: `"customer":"Grace Hopper"`},
		{name: "unknown order", tool: tool.LookupOrderName, args: `{"order_id":"Z-9"}`, wantErr: `no order "Z-9"`},
		{name: "notify", tool: tool.NotifyName, args: `{"to":"ada@example.com"}`, want: "sent to ada@example.com"},
		{name: "notify bounces", tool: tool.NotifyName, args: `{"to":"charles@example.invalid"}`, wantErr: "bounced"},
		{name: "notify switched off", opts: tool.DemoShopOptions{FailNotify: true}, tool: tool.NotifyName, args: `{"to":"ada@example.com"}`, wantErr: "bounced"},
		{name: "cancel unknown refund", tool: tool.CancelRefundName, args: `{"refund_id":"R-9"}`, wantErr: `no refund "R-9"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			reg, _ := demoRegistry(t, tc.opts)
			res := call(reg, tc.tool, tc.args, "k")
			if tc.wantErr != "" {
				if !res.IsError || !strings.Contains(res.Content, tc.wantErr) {
					t.Errorf("result %+v, want an error containing %q", res, tc.wantErr)
				}
				return
			}
			if res.IsError || !strings.Contains(res.Content, tc.want) {
				t.Errorf("result %+v, want %q", res, tc.want)
			}
		})
	}
}

// Two shops over one ledger file are one shop: a refund issued by one is
// recognised by the other under the same key, and its cancel is seen by
// both. A tool named in PauseAfter records its effect, then blocks until
// its call is cancelled.
func TestDemoLedgerSharedByProcesses(t *testing.T) {
	ledger := t.TempDir() + "/ledger.jsonl"
	regA, shopA := demoRegistry(t, tool.DemoShopOptions{Ledger: ledger, PauseAfter: tool.IssueRefundName})
	regB, shopB := demoRegistry(t, tool.DemoShopOptions{Ledger: ledger})

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan tool.Result)
	go func() {
		done <- regA.Execute(ctx, tool.Call{ID: "c", Name: tool.IssueRefundName, Arguments: json.RawMessage(`{"order_id":"A-1001"}`), IdempotencyKey: "run:refund:1"})
	}()
	// A's effect is in the ledger once B sees it; A's call is still paused.
	var replay tool.Result
	for {
		if issued, _, _ := shopB.Counts(); issued == 1 {
			replay = call(regB, tool.IssueRefundName, `{"order_id":"A-1001"}`, "run:refund:1")
			break
		}
		select {
		case res := <-done:
			t.Fatalf("the paused call answered: %+v", res)
		default:
		}
	}
	cancel()
	if res := <-done; !res.IsError {
		t.Errorf("the paused call answered %+v, want the cancellation", res)
	}
	if replay.IsError || !strings.Contains(replay.Content, `"refund_id":"R-1"`) {
		t.Fatalf("replay on B: %+v, want refund R-1", replay)
	}
	if res := call(regB, tool.CancelRefundName, `{"refund_id":"R-1"}`, ""); res.IsError {
		t.Fatalf("cancel on B: %+v", res)
	}
	for name, shop := range map[string]*tool.DemoShop{"A": shopA, "B": shopB} {
		if issued, cancelled, _ := shop.Counts(); issued != 1 || cancelled != 1 {
			t.Errorf("shop %s counts %d issued, %d cancelled; want 1 and 1", name, issued, cancelled)
		}
	}
}
