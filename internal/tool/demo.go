package tool

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"

	"agentd/internal/errdefs"
)

// The demo shop's tool names (the refund demo flow calls them).
const (
	LookupOrderName  = "lookup_order"
	IssueRefundName  = "issue_refund"
	CancelRefundName = "cancel_refund"
	NotifyName       = "notify"
)

// DemoShopOptions configures the demo shop.
type DemoShopOptions struct {
	// FailNotify makes every notification fail, to show a flow undoing a
	// refund. Without it only addresses under the reserved .invalid
	// domain fail (order A-1002's customer has one).
	FailNotify bool
	// Ledger, when set, is a file that keeps the refunds (one JSON line
	// per issue or cancel), so that several processes — replicas, or a
	// process and its restart — share one shop and a replayed
	// issue_refund is recognised by whichever process replays it. The
	// shop rereads it before every refund operation; writers take turns
	// (a run's lease makes one replica call its tools at a time).
	Ledger string
	// PauseAfter names a tool that, once its effect is recorded, blocks
	// until its call is cancelled instead of answering: a test kills the
	// process there, after the effect and before the flow's checkpoint.
	PauseAfter string
}

// DemoShop is a tiny in-memory shop behind the refund demo's tools: three
// orders, the refunds issued and cancelled. issue_refund recognises a
// replayed call by its idempotency key and answers with the refund it
// already issued, so a flow resumed after a crash refunds once. It is safe
// for concurrent use.
type DemoShop struct {
	opts DemoShopOptions

	mu      sync.Mutex
	refunds map[string]*demoRefund // by refund id
	byKey   map[string]string      // idempotency key → refund id
	sent    int
}

type demoOrder struct {
	ID       string  `json:"order_id"`
	Customer string  `json:"customer"`
	Email    string  `json:"email"`
	Item     string  `json:"item"`
	Amount   float64 `json:"amount"`
	Currency string  `json:"currency"`
}

type demoRefund struct {
	ID        string  `json:"refund_id"`
	OrderID   string  `json:"order_id"`
	Amount    float64 `json:"amount"`
	Currency  string  `json:"currency"`
	Reason    string  `json:"reason"`
	Status    string  `json:"status"`
	Cancelled bool    `json:"-"`
}

var demoOrders = map[string]demoOrder{
	"A-1001": {ID: "A-1001", Customer: "Ada Lovelace", Email: "ada@example.com", Item: "analytical engine manual", Amount: 42.50, Currency: "EUR"},
	"A-1002": {ID: "A-1002", Customer: "Charles Babbage", Email: "charles@example.invalid", Item: "difference engine gears", Amount: 120, Currency: "GBP"},
	"A-1003": {ID: "A-1003", Customer: "Grace Hopper", Email: "grace@example.com", Item: "nanosecond wire", Amount: 7.25, Currency: "USD"},
}

// NewDemoShop returns an empty shop.
func NewDemoShop(opts DemoShopOptions) *DemoShop {
	return &DemoShop{opts: opts, refunds: map[string]*demoRefund{}, byKey: map[string]string{}}
}

// Counts reports how many refunds were issued and cancelled, and how many
// notifications were sent.
func (s *DemoShop) Counts() (issued, cancelled, notified int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	_ = s.loadLedger() // best effort: the counts as last read otherwise
	for _, r := range s.refunds {
		issued++
		if r.Cancelled {
			cancelled++
		}
	}
	return issued, cancelled, s.sent
}

// Tools returns lookup_order, issue_refund, cancel_refund and notify.
func (s *DemoShop) Tools() []Tool {
	return []Tool{s.lookupOrder(), s.issueRefund(), s.cancelRefund(), s.notify()}
}

func dataResult(v any) (Result, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Result{}, err
	}
	return Result{Content: string(b), Data: b}, nil
}

func (s *DemoShop) lookupOrder() Tool {
	spec := Spec{
		Name:        LookupOrderName,
		Description: "Look up a demo order by id (A-1001, A-1002, A-1003).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","minLength":1}},"required":["order_id"],"additionalProperties":false}`),
		Flags:       Flags{ParallelSafe: true, Idempotent: true},
	}
	type args struct {
		OrderID string `json:"order_id"`
	}
	return Typed(spec, func(_ context.Context, a args) (Result, error) {
		o, ok := demoOrders[strings.ToUpper(strings.TrimSpace(a.OrderID))]
		if !ok {
			return Result{}, errdefs.NotFoundf("no order %q (try A-1001, A-1002 or A-1003)", a.OrderID)
		}
		return dataResult(o)
	})
}

// ledgerEntry is one line of the ledger file.
type ledgerEntry struct {
	Op     string      `json:"op"` // "issue" or "cancel"
	Key    string      `json:"idempotency_key,omitempty"`
	Refund *demoRefund `json:"refund"`
}

// loadLedger rebuilds the refunds from the ledger file. Callers hold s.mu.
func (s *DemoShop) loadLedger() error {
	if s.opts.Ledger == "" {
		return nil
	}
	f, err := os.Open(s.opts.Ledger)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return errdefs.NotAvailablef("demo shop ledger: %v", err)
	}
	defer f.Close()
	s.refunds, s.byKey = map[string]*demoRefund{}, map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var e ledgerEntry
		if json.Unmarshal(sc.Bytes(), &e) != nil || e.Refund == nil {
			continue // a line torn by a crash
		}
		r := e.Refund
		if e.Op == "cancel" {
			r.Cancelled = true
		}
		s.refunds[r.ID] = r
		if e.Key != "" {
			s.byKey[e.Key] = r.ID
		}
	}
	return sc.Err()
}

// record appends an operation to the ledger file. Callers hold s.mu.
func (s *DemoShop) record(op, key string, r *demoRefund) error {
	if s.opts.Ledger == "" {
		return nil
	}
	line, err := json.Marshal(ledgerEntry{Op: op, Key: key, Refund: r})
	if err != nil {
		return err
	}
	f, err := os.OpenFile(s.opts.Ledger, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return errdefs.NotAvailablef("demo shop ledger: %v", err)
	}
	_, err = f.Write(append(line, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// pause blocks a tool named in PauseAfter until ctx ends.
func (s *DemoShop) pause(ctx context.Context, name string) error {
	if s.opts.PauseAfter != name {
		return nil
	}
	<-ctx.Done()
	return ctx.Err()
}

func (s *DemoShop) issueRefund() Tool {
	spec := Spec{
		Name:        IssueRefundName,
		Description: "Refund a demo order in full. Replays with the same idempotency key return the refund already issued.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"order_id":{"type":"string","minLength":1},"reason":{"type":"string"}},"required":["order_id"],"additionalProperties":false}`),
		Flags:       Flags{Idempotent: true},
	}
	type args struct {
		OrderID string `json:"order_id"`
		Reason  string `json:"reason"`
	}
	return Typed(spec, func(ctx context.Context, a args) (Result, error) {
		o, ok := demoOrders[strings.ToUpper(strings.TrimSpace(a.OrderID))]
		if !ok {
			return Result{}, errdefs.NotFoundf("no order %q", a.OrderID)
		}
		call, _ := CallFromContext(ctx)
		r, err := s.issue(o, a.Reason, call.IdempotencyKey)
		if err != nil {
			return Result{}, err
		}
		if err := s.pause(ctx, IssueRefundName); err != nil {
			return Result{}, err
		}
		return dataResult(r)
	})
}

// issue refunds order o once per idempotency key.
func (s *DemoShop) issue(o demoOrder, reason, key string) (*demoRefund, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.loadLedger(); err != nil {
		return nil, err
	}
	if id, seen := s.byKey[key]; seen && key != "" {
		return s.refunds[id], nil
	}
	r := &demoRefund{ID: fmt.Sprintf("R-%d", len(s.refunds)+1), OrderID: o.ID, Amount: o.Amount,
		Currency: o.Currency, Reason: reason, Status: "issued"}
	if err := s.record("issue", key, r); err != nil {
		return nil, err
	}
	s.refunds[r.ID] = r
	if key != "" {
		s.byKey[key] = r.ID
	}
	return r, nil
}

func (s *DemoShop) cancelRefund() Tool {
	spec := Spec{
		Name:        CancelRefundName,
		Description: "Cancel a refund (the compensation of issue_refund). Cancelling twice is not an error.",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"refund_id":{"type":"string","minLength":1}},"required":["refund_id"],"additionalProperties":false}`),
		Flags:       Flags{Idempotent: true},
	}
	type args struct {
		RefundID string `json:"refund_id"`
	}
	return Typed(spec, func(_ context.Context, a args) (Result, error) {
		s.mu.Lock()
		defer s.mu.Unlock()
		if err := s.loadLedger(); err != nil {
			return Result{}, err
		}
		r, ok := s.refunds[a.RefundID]
		if !ok {
			return Result{}, errdefs.NotFoundf("no refund %q", a.RefundID)
		}
		r.Cancelled, r.Status = true, "cancelled"
		if err := s.record("cancel", "", r); err != nil {
			return Result{}, err
		}
		return dataResult(r)
	})
}

func (s *DemoShop) notify() Tool {
	spec := Spec{
		Name:        NotifyName,
		Description: "Send the customer an e-mail (demo: addresses under .invalid bounce).",
		Parameters:  json.RawMessage(`{"type":"object","properties":{"to":{"type":"string","minLength":1},"message":{"type":"string"}},"required":["to"],"additionalProperties":false}`),
	}
	type args struct {
		To      string `json:"to"`
		Message string `json:"message"`
	}
	return Typed(spec, func(_ context.Context, a args) (Result, error) {
		if s.opts.FailNotify || strings.HasSuffix(strings.ToLower(a.To), ".invalid") {
			// Public: the message names no infrastructure, and it is what the
			// refund demo's user must read.
			return Result{}, errdefs.Public(errdefs.NotAvailablef("cannot deliver to %q: the mail server bounced it", a.To))
		}
		s.mu.Lock()
		s.sent++
		s.mu.Unlock()
		return Text("sent to " + a.To), nil
	})
}
