package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// effectService is the test's HTTP service with effects (a payment API,
// say): POST /charge makes a charge. It counts, per Idempotency-Key, the
// requests it got and the effects it did. A keyed service does the effect
// once per key and answers a repeated key with the first charge, as
// Stripe-like APIs do; an unkeyed one charges on every request. GET
// /charges/{key} is its status call: 200 with the charge, or 404.
type effectService struct {
	keyed bool
	srv   *httptest.Server

	mu       sync.Mutex
	requests map[string]int
	effects  map[string]int
	results  map[string]string
	n        int
}

func newEffectService(t *testing.T, keyed bool) *effectService {
	s := &effectService{keyed: keyed, requests: map[string]int{}, effects: map[string]int{}, results: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /charge", s.charge)
	mux.HandleFunc("GET /charges/{key}", s.status)
	s.srv = httptest.NewServer(mux)
	t.Cleanup(s.srv.Close)
	return s
}

func (s *effectService) charge(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	var args struct {
		Amount int `json:"amount"`
	}
	body, _ := io.ReadAll(r.Body)
	if json.Unmarshal(body, &args) != nil {
		http.Error(w, "bad body", http.StatusBadRequest)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[key]++
	if res, ok := s.results[key]; ok && s.keyed {
		fmt.Fprint(w, res)
		return
	}
	s.n++
	s.effects[key]++
	res := fmt.Sprintf("charge ch-%d of %d", s.n, args.Amount)
	s.results[key] = res
	fmt.Fprint(w, res)
}

func (s *effectService) status(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	res, ok := s.results[r.PathValue("key")]
	if !ok {
		http.NotFound(w, r)
		return
	}
	fmt.Fprint(w, res)
}

// counts returns the requests and effects per key, copied.
func (s *effectService) counts() (requests, effects map[string]int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	requests, effects = map[string]int{}, map[string]int{}
	for k, v := range s.requests {
		requests[k] = v
	}
	for k, v := range s.effects {
		effects[k] = v
	}
	return requests, effects
}

// effectsConfig writes a configuration whose scripted model calls the
// HTTP tool charge (keyed, on the keyed service) for "charge <n>" and pay
// (unsafe, on the unkeyed one) for "pay <n>", then answers with the
// result; the agents payer-<policy> differ by their in_doubt policy.
func effectsConfig(t *testing.T, keyed, unkeyed *effectService) string {
	t.Helper()
	cfg := fmt.Sprintf(`server:
  lease_ttl: 2s
  metrics_on_main: true
providers:
  pay-script:
    type: scripted
    rules:
      - {name: charged, after_tool: charge, reply: 'Done: {{.ToolResult}}.'}
      - {name: paid, after_tool: pay, reply: 'Done: {{.ToolResult}}.'}
      - name: charge
        match: '(?i)^charge (\d+)$'
        tool_calls: [{name: charge, arguments: '{"amount": {{index .Groups 1}}}'}]
      - name: pay
        match: '(?i)^pay (\d+)$'
        tool_calls: [{name: pay, arguments: '{"amount": {{index .Groups 1}}}'}]
      - {name: other, match: '(?s).*', reply: 'Say "charge <amount>".'}
tools:
  http:
    - name: charge
      description: Charge the customer's card (the service honours Idempotency-Key).
      url: %[1]s/charge
      effects: keyed
      allow_private: true
      parameters: {type: object, properties: {amount: {type: integer}}, required: [amount]}
    - name: pay
      description: Pay a supplier (the service does not dedupe).
      url: %[2]s/charge
      status_url: %[2]s/charges/{key}
      effects: unsafe
      allow_private: true
      parameters: {type: object, properties: {amount: {type: integer}}, required: [amount]}
agents:
  - {id: payer-retry, engine: loop, provider: pay-script, tools: [charge, pay], in_doubt: {"*": retry}}
  - {id: payer-reconcile, engine: loop, provider: pay-script, tools: [pay], in_doubt: {pay: reconcile}}
  - {id: payer-ask, engine: loop, provider: pay-script, tools: [charge, pay], in_doubt: {"*": ask}}
  - {id: payer-fail, engine: loop, provider: pay-script, tools: [pay], in_doubt: {pay: fail}}
  - {id: pay-flow, engine: flow, flow: pay.yaml}
  - {id: pay-flow-ask, engine: flow, flow: pay.yaml, in_doubt: {"*": ask}}
`, keyed.srv.URL, unkeyed.srv.URL)
	dir := t.TempDir()
	path := filepath.Join(dir, "agentd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pay.yaml"), []byte(payFlow), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// payFlow is a flow whose one action charges (keyed) and whose answer
// shows the receipt.
const payFlow = `name: pay
nodes:
  - id: start
    do:
      name: charge
      args:
        amount: 77
    save_to: receipt
    to: done
  - id: done
    content: "Paid: {{ .receipt }}."
`

// effectEvents are the run's effect.* events of type typ.
func effectEvents(evs []event, typ string) []event {
	var out []event
	for _, ev := range evs {
		if ev.typ == typ {
			out = append(out, ev)
		}
	}
	return out
}

// keysOf are the effect keys of evs.
func keysOf(evs []event) []string {
	var out []string
	for _, ev := range evs {
		k, _ := ev.data["key"].(string)
		out = append(out, k)
	}
	return out
}

// answerText is the text of the last message of a run.
func answerText(r approvalRun) string { return strings.TrimSpace(r.lastText()) }
