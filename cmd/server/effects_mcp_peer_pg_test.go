package main

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"sigs.k8s.io/yaml"
)

// bankServer is a go-sdk MCP server whose tool transfer takes the effect
// key as its idempotency_key argument (so agentd declares it keyed) and
// does one transfer per key; it notes the key the call's _meta carried.
type bankServer struct {
	mu        sync.Mutex
	requests  map[string]int
	effects   map[string]int
	metaKeys  map[string]string // argument key → _meta key
	results   map[string]string
	transfers int
}

func newBankServer(t *testing.T) (*bankServer, string) {
	b := &bankServer{requests: map[string]int{}, effects: map[string]int{}, metaKeys: map[string]string{}, results: map[string]string{}}
	type transferArgs struct {
		Amount         int    `json:"amount" jsonschema:"the amount"`
		IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"the call's key"`
	}
	h := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server {
		s := mcp.NewServer(&mcp.Implementation{Name: "bank", Version: "1"}, nil)
		mcp.AddTool(s, &mcp.Tool{Name: "transfer", Description: "Transfers money."},
			func(_ context.Context, req *mcp.CallToolRequest, a transferArgs) (*mcp.CallToolResult, any, error) {
				meta, _ := req.Params.Meta["agentd.dev/effect-key"].(string)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.transfer(a.IdempotencyKey, meta, a.Amount)}}}, nil, nil
			})
		type payArgs struct {
			Amount int `json:"amount" jsonschema:"the amount"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "pay", Description: "Pays (no key argument: unsafe for agentd)."},
			func(_ context.Context, req *mcp.CallToolRequest, a payArgs) (*mcp.CallToolResult, any, error) {
				meta, _ := req.Params.Meta["agentd.dev/effect-key"].(string)
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: b.transfer(meta, meta, a.Amount)}}}, nil, nil
			})
		type statusArgs struct {
			IdempotencyKey string `json:"idempotency_key" jsonschema:"the call's key"`
		}
		mcp.AddTool(s, &mcp.Tool{Name: "payment_status", Description: "Finds a payment by key.", Annotations: &mcp.ToolAnnotations{ReadOnlyHint: true}},
			func(_ context.Context, _ *mcp.CallToolRequest, a statusArgs) (*mcp.CallToolResult, any, error) {
				b.mu.Lock()
				defer b.mu.Unlock()
				res, ok := b.results[a.IdempotencyKey]
				if !ok {
					return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no payment"}}}, nil, nil
				}
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: res}}}, nil, nil
			})
		return s
	}, &mcp.StreamableHTTPOptions{Stateless: true}) // no session outlives a killed client
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return b, srv.URL
}

func (b *bankServer) transfer(key, meta string, amount int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.requests[key]++
	b.metaKeys[key] = meta
	if b.effects[key] == 0 {
		b.transfers++
		b.effects[key]++
		b.results[key] = fmt.Sprintf("transfer tr-%d of %d", b.transfers, amount)
	}
	return b.results[key]
}

const bankConfig = `server: {lease_ttl: 2s}
providers:
  bank-script:
    type: scripted
    rules:
      - {after_tool: '*', reply: 'Done: {{.ToolResult}}.'}
      - {match: '^transfer (\d+)$', tool_calls: [{name: bank__transfer, arguments: '{"amount": {{index .Groups 1}}}'}]}
      - {match: '^pay (\d+)$', tool_calls: [{name: bank__pay, arguments: '{"amount": {{index .Groups 1}}}'}]}
      - {reply: 'Say "transfer N".'}
tools:
  effects:
    bank__pay: {status_tool: bank__payment_status, in_doubt: reconcile}
agents:
  - {id: teller, engine: loop, provider: bank-script, mcp_servers: [{name: bank, url: %s}]}
`

// TestMCPToolEffectExactlyOnce: an MCP tool that takes the effect key as
// an argument, cut after its call and before its result was durable: the
// resumed run retries it with the same key — in the argument and in
// _meta — and the server does one transfer.
func TestMCPToolEffectExactlyOnce(t *testing.T) {
	skipShort(t)
	bank, url := newBankServer(t)
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(fmt.Sprintf(bankConfig, url)), 0o644); err != nil {
		t.Fatal(err)
	}
	g := &effectsRig{dsn: sharedDSN(t), cfg: path, c: newClient(t)}
	g.b = startReplica(t, "B", g.dsn, g.cfg)
	id, evs := g.cut(t, "before-result", "teller", "transfer 31")
	checkExactlyOnce(t, evs)
	key := oneKey(t, evs)
	bank.mu.Lock()
	defer bank.mu.Unlock()
	if bank.effects[key] != 1 || bank.requests[key] != 2 || bank.metaKeys[key] != key {
		t.Errorf("under the log's key %s: %d transfer(s), %d request(s), _meta key %q; want 1, 2 and the same key (all: %v)", key, bank.effects[key], bank.requests[key], bank.metaKeys[key], bank.requests)
	}
	run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
	if run.Status != "completed" || answerText(run) != "Done: transfer tr-1 of 31." {
		t.Errorf("run: %s %q", run.Status, answerText(run))
	}
	bank.mu.Unlock()

	// pay takes no key argument (unsafe); its status tool finds the
	// payment by the key the call's _meta carried: reconciled, not re-paid.
	id, evs = g.cut(t, "before-result", "teller", "pay 32")
	key = oneKey(t, evs)
	bank.mu.Lock()
	if r := resolution(t, evs); r != "reconciled" || bank.effects[key] != 1 || bank.requests[key] != 1 {
		t.Errorf("pay under %s: resolution %q, %d payment(s), %d request(s); want reconciled, 1, 1", key, r, bank.effects[key], bank.requests[key])
	}
	run = readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
	if run.Status != "completed" || answerText(run) != "Done: transfer tr-2 of 32." {
		t.Errorf("run: %s %q", run.Status, answerText(run))
	}
}

// TestPeerToolEffectExactlyOnce: the demo scout's peer tool reaches a
// third agentd process P; the caller is cut before the call and after it
// (before its result was durable). The effect key is the peer message's
// messageId, in a context derived from it, so P runs one task per call;
// with in_doubt reconcile the resumed caller asks P for that context's
// tasks: none before the call (it runs), the completed one after (its
// answer is used, nothing is sent again).
func TestPeerToolEffectExactlyOnce(t *testing.T) {
	skipShort(t)
	p := startReplica(t, "P", "", writeConfig(t, nil))
	g := &effectsRig{dsn: sharedDSN(t), c: newClient(t)}
	g.cfg = withScoutPeer(t, writeConfig(t, map[string]any{"lease_ttl": "2s"}), p.base+"/agents/echo/.well-known/agent-card.json")
	reconcileScout(t, g.cfg)
	g.b = startReplica(t, "B", g.dsn, g.cfg)
	for point, how := range map[string]string{"after-intent": "absent", "before-result": "reconciled"} {
		t.Run(point, func(t *testing.T) {
			id, evs := g.cut(t, point, "scout", "ask the peer hello "+point)
			checkExactlyOnce(t, evs)
			key := oneKey(t, evs)
			if r := resolution(t, evs); r != how {
				t.Errorf("resolution %q, want %q (the peer's tasks of the call, asked)", r, how)
			}
			res, err := g.c.Get(p.base + "/v1/runs?context=ctx-" + key)
			if err != nil {
				t.Fatal(err)
			}
			runs := readJSON[struct {
				Runs []runState `json:"runs"`
			}](t, res, http.StatusOK)
			if len(runs.Runs) != 1 || runs.Runs[0].Status != "completed" {
				t.Errorf("the peer's runs for the call: %+v, want one, completed", runs.Runs)
			}
			run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
			if run.Status != "completed" || !strings.Contains(answerText(run), "hello "+point) {
				t.Errorf("run: %s %q", run.Status, answerText(run))
			}
		})
	}
}

// reconcileScout sets the scout's in_doubt policy to reconcile in the
// configuration at path.
func reconcileScout(t *testing.T, path string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(b, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg["agents"].([]any) {
		if m, _ := a.(map[string]any); m["id"] == "scout" {
			m["in_doubt"] = map[string]any{"ask_echo": "reconcile"}
		}
	}
	if b, err = yaml.Marshal(cfg); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
