package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"sigs.k8s.io/yaml"

	runs "agentd/internal/run"
	"agentd/internal/store/pgstore"
)

// Tool-calling runs (-tools): a share of the REST runs go to the agent
// payer, whose scripted model calls the HTTP tool charge once and answers
// with its result. charge reaches effectService, which honours
// Idempotency-Key like a payment API and counts, per key, the requests it
// got and the charges it made. The check then holds the service to the
// logs: every call a completed run's log intends was charged exactly once,
// under the key the log names, and nothing else was charged.

// toolAgent is the agent of the tool-calling runs.
const toolAgent = "payer"

// effectService is the charge API the tool-calling runs call.
type effectService struct {
	srv *http.Server
	url string
	// doubleOnce makes the first charge twice (-inject charge): the check
	// must report it.
	doubleOnce bool

	mu       sync.Mutex
	requests map[string]int
	charges  map[string]int
	results  map[string]string
}

func startEffectService() (*effectService, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	s := &effectService{url: "http://" + ln.Addr().String(), requests: map[string]int{}, charges: map[string]int{}, results: map[string]string{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /charge", s.charge)
	s.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = s.srv.Serve(ln) }()
	return s, nil
}

func (s *effectService) charge(w http.ResponseWriter, r *http.Request) {
	key := r.Header.Get("Idempotency-Key")
	_, _ = io.Copy(io.Discard, r.Body)
	time.Sleep(time.Second) // a slow API: kills land mid-call
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests[key]++
	if res, ok := s.results[key]; ok && key != "" {
		fmt.Fprint(w, res)
		return
	}
	s.charges[key]++
	if s.doubleOnce {
		s.charges[key]++
		s.doubleOnce = false
	}
	res := fmt.Sprintf("charge %d", len(s.results)+1)
	s.results[key] = res
	fmt.Fprint(w, res)
}

func (s *effectService) close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}

// addToolAgent adds the charge tool and the payer agent to the
// configuration at path.
func addToolAgent(path, serviceURL string) error {
	raw, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		return err
	}
	var add map[string]any
	if err := yaml.Unmarshal([]byte(strings.ReplaceAll(toolAgentYAML, "SERVICE", serviceURL)), &add); err != nil {
		return err
	}
	cfg["providers"].(map[string]any)["pay-script"] = add["provider"]
	tools, _ := cfg["tools"].(map[string]any)
	if tools == nil {
		tools = map[string]any{}
		cfg["tools"] = tools
	}
	tools["http"] = add["http"]
	cfg["agents"] = append(cfg["agents"].([]any), add["agent"])
	out, err := yaml.Marshal(cfg)
	if err != nil {
		return err
	}
	return os.WriteFile(path, out, 0o600)
}

const toolAgentYAML = `
provider:
  type: scripted
  rules:
    - {after_tool: charge, reply: 'Done: {{.ToolResult}}.'}
    - {match: '^charge (\d+)$', tool_calls: [{name: charge, arguments: '{"amount": {{index .Groups 1}}}'}]}
http:
  - {name: charge, url: SERVICE/charge, effects: keyed, allow_private: true, timeout: 5s}
agent: {id: payer, engine: loop, provider: pay-script, tools: [charge]}
`

// effectTally is what the check found of the tool-calling runs.
type effectTally struct {
	calls, keys, requests         int
	resumed, doubts               int // runs resumed after a fault; calls found in doubt
	duplicates, missing, phantoms int
}

// checkEffects holds the service to the logs of the tool-calling runs.
func (e *env) checkEffects(ctx context.Context, st *pgstore.Store, tool []*clientRun, rep *report) {
	intended := map[string]string{} // key → run
	for _, cr := range tool {
		evs, err := readAll(ctx, st, cr.id)
		if err != nil {
			continue // checkRun reported it
		}
		for _, k := range intentKeys(evs) {
			intended[k] = cr.id
		}
		starts := 0
		for _, ev := range evs {
			switch ev.Type {
			case "run.start":
				starts++
			case "effect.doubt":
				rep.effects.doubts++
			}
		}
		if starts > 1 {
			rep.effects.resumed++
		}
	}
	s := e.svc
	s.mu.Lock()
	defer s.mu.Unlock()
	t := &rep.effects
	t.calls, t.keys = len(intended), len(s.charges)
	for k, run := range intended {
		switch n := s.charges[k]; {
		case n == 0:
			t.missing++
			rep.problem("run %s: its log intends the call with key %s, which the service never charged", run, k)
		case n > 1:
			t.duplicates += n - 1
			rep.problem("run %s: key %s charged %d times", run, k, n)
		}
	}
	for k, n := range s.charges {
		t.requests += s.requests[k]
		if _, ok := intended[k]; !ok {
			t.phantoms += n
			rep.problem("the service charged key %q, which no run's log intends", k)
		}
	}
}

// intentKeys are the effect keys of a log's effect.intent events.
func intentKeys(evs []runs.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type != "effect.intent" {
			continue
		}
		var d struct {
			Key string `json:"key"`
		}
		if json.Unmarshal(ev.Data, &d) == nil && d.Key != "" {
			out = append(out, d.Key)
		}
	}
	return out
}

// checkToolRun checks a tool-calling run's answer: the charge's result.
func checkToolRun(cr *clientRun, evs []runs.Event, rep *report) {
	var text strings.Builder
	for _, ev := range evs {
		var d struct {
			Text string `json:"text"`
		}
		if ev.Type == "delta" && json.Unmarshal(ev.Data, &d) == nil {
			text.WriteString(d.Text)
		}
	}
	if strings.Contains(text.String(), "Done: charge ") {
		return
	}
	rep.skipped++
	rep.problem("run %s: its deltas do not hold the answer with the charge", cr.id)
}
