package main

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"
)

// A run's trajectory through the HTTP API, on memstore and on PostgreSQL:
// the model steps priced from the configuration's prices, the tool step
// with its arguments, result and governance verdict, and the run's total
// cost — on the trajectory and on the run itself (GET /v1/runs/{id}),
// compactions included.

// pricedConfig is the demo configuration plus a guarded agent with a model
// name that has a price.
func pricedConfig(t *testing.T) string {
	t.Helper()
	return demoConfigWith(t, func(cfg map[string]any) {
		for _, a := range cfg["agents"].([]any) {
			if a := a.(map[string]any); a["id"] == "guarded" {
				priced := map[string]any{}
				for k, v := range a {
					priced[k] = v
				}
				priced["id"], priced["model"] = "priced", "demo-small"
				delete(priced, "skills")
				cfg["agents"] = append(cfg["agents"].([]any), priced)
				break
			}
		}
		cfg["prices"] = map[string]any{"demo-small": map[string]any{"input_per_million": 2.5, "output_per_million": 10}}
	})
}

type trajectoryJSON struct {
	Steps []struct {
		Type         string            `json:"type"`
		Attempt      int               `json:"attempt"`
		Model        string            `json:"model"`
		InputTokens  int64             `json:"input_tokens"`
		OutputTokens int64             `json:"output_tokens"`
		FinishReason string            `json:"finish_reason"`
		ToolCalls    int               `json:"tool_calls"`
		Cost         *float64          `json:"cost"`
		Tool         string            `json:"tool"`
		CallID       string            `json:"call_id"`
		Arguments    json.RawMessage   `json:"arguments"`
		Result       string            `json:"result"`
		Error        string            `json:"error"`
		Governance   []json.RawMessage `json:"governance"`
	} `json:"steps"`
	Usage          usageJSON `json:"usage"`
	Cost           *float64  `json:"cost"`
	UnpricedModels []string  `json:"unpriced_models"`
}

type usageJSON struct {
	InputTokens  int64 `json:"input_tokens"`
	OutputTokens int64 `json:"output_tokens"`
	TotalTokens  int64 `json:"total_tokens"`
}

// costJSON is the usage and cost of a run as GET /v1/runs/{id} shows them.
type costJSON struct {
	Usage          usageJSON `json:"usage"`
	Cost           *float64  `json:"cost"`
	UnpricedModels []string  `json:"unpriced_models"`
}

// costString shows a cost that may be absent.
func costString(c *float64) string {
	if c == nil {
		return "none"
	}
	return strconv.FormatFloat(*c, 'g', -1, 64)
}

// demoSmallCost is what in and out tokens of demo-small cost at
// pricedConfig's prices.
func demoSmallCost(in, out int64) float64 { return (float64(in)*2.5 + float64(out)*10) / 1e6 }

func TestTrajectoryCostAndGovernance(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, pricedConfig(t), dsn)
		_, run := s.postJSONRun(t, "/v1/agents/priced/messages", `{"text":"read notes.txt"}`)
		if run.Status != "completed" {
			t.Fatalf("read: %s %q", run.Status, run.lastText())
		}
		tr := readJSON[trajectoryJSON](t, s.get(t, "/v1/runs/"+run.ID+"/trajectory"), http.StatusOK)
		var models, tools int
		var sum float64
		var tokens int64
		for _, st := range tr.Steps {
			switch st.Type {
			case "model":
				models++
				want := demoSmallCost(st.InputTokens, st.OutputTokens)
				if st.Model != "demo-small" || st.Cost == nil || math.Abs(*st.Cost-want) > 1e-12 || want == 0 || st.Attempt != 1 {
					t.Fatalf("model step %+v: want model demo-small costing %g", st, want)
				}
				sum += *st.Cost
				tokens += st.InputTokens + st.OutputTokens
			case "tool":
				tools++
				var args map[string]any
				_ = json.Unmarshal(st.Arguments, &args)
				if st.Tool != "read_file" || len(st.Governance) == 0 || st.CallID == "" || st.Error != "" ||
					len(args) != 1 || args["path"] != "notes.txt" || st.Result != "contents of notes.txt: hello from the demo file system" {
					t.Fatalf("tool step %+v: want read_file of notes.txt, its result and its governance verdict", st)
				}
				var v map[string]any
				if err := json.Unmarshal(st.Governance[0], &v); err != nil || v["verdict"] != "allow" || v["rule"] != "reads are allowed" {
					t.Fatalf("governance on the tool step: %s, want an allow by the rule \"reads are allowed\"", st.Governance[0])
				}
			}
		}
		if models != 2 || tools != 1 {
			t.Fatalf("%d model and %d tool steps, want 2 and 1", models, tools)
		}
		if first := tr.Steps[0]; first.Type != "model" || first.ToolCalls != 1 || first.FinishReason == "" {
			t.Fatalf("first step %+v: want the model turn that proposed the call, with its finish reason", first)
		}
		if tr.Cost == nil || math.Abs(*tr.Cost-sum) > 1e-12 || tr.Usage.TotalTokens != tokens || len(tr.UnpricedModels) != 0 {
			t.Fatalf("totals: cost %s (steps add up to %g), usage %d (steps %d), unpriced %q", costString(tr.Cost), sum, tr.Usage.TotalTokens, tokens, tr.UnpricedModels)
		}
		// The run shows the same cost, from its usage.
		rv := readJSON[costJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
		if rv.Cost == nil || math.Abs(*rv.Cost-sum) > 1e-12 || rv.Usage.TotalTokens != tokens || len(rv.UnpricedModels) != 0 {
			t.Fatalf("the run: cost %s, usage %+v, unpriced %q; want the trajectory's cost %g", costString(rv.Cost), rv.Usage, rv.UnpricedModels, sum)
		}

		// The demo's guarded agent names no model: its steps are unpriced,
		// and the trajectory says so rather than showing a cost.
		_, run = s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"read notes.txt"}`)
		tr = readJSON[trajectoryJSON](t, s.get(t, "/v1/runs/"+run.ID+"/trajectory"), http.StatusOK)
		if tr.Cost != nil || len(tr.UnpricedModels) != 1 {
			t.Fatalf("unpriced run: cost %s, unpriced models %q; want no cost and one unpriced model", costString(tr.Cost), tr.UnpricedModels)
		}
		if rv := readJSON[costJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK); rv.Cost != nil || len(rv.UnpricedModels) != 1 || rv.UnpricedModels[0] != "" {
			t.Fatalf("unpriced run: cost %s, unpriced models %q; want no cost and the unnamed model", costString(rv.Cost), rv.UnpricedModels)
		}
	})
}

// pricedCompactConfig is compactConfig with the compact agent's model
// named demo-small, which has a price.
func pricedCompactConfig(t *testing.T) string {
	t.Helper()
	path := compactConfig(t)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
	for _, a := range cfg["agents"].([]any) {
		if a := a.(map[string]any); a["id"] == "compact" {
			a["model"] = "demo-small"
		}
	}
	cfg["prices"] = map[string]any{"demo-small": map[string]any{"input_per_million": 2.5, "output_per_million": 10}}
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestRunCostIncludesCompaction: the cost of a run that compacted its
// context is its model steps' plus its summarisation calls' (which are
// no step of the trajectory), on the run and on its trajectory alike.
func TestRunCostIncludesCompaction(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, pricedCompactConfig(t), dsn)
		long := strings.Repeat("Here is some background I want you to keep in mind. ", 8)
		contextID := ""
		for i := range 8 {
			body := `{"text":"` + long + `"`
			if contextID != "" {
				body += `,"context_id":"` + contextID + `"`
			}
			_, run := s.postJSONRun(t, "/v1/agents/compact/messages", body+"}")
			if run.Status != "completed" {
				t.Fatalf("turn %d: %s %s", i, run.Status, run.Error)
			}
			contextID = run.ContextID
			compactions := compactionEvents(t, s, run.ID)
			if len(compactions) == 0 {
				continue
			}
			var summaries float64
			for _, ev := range compactions {
				p, _ := ev["payload"].(map[string]any)
				in, _ := p["input_tokens"].(float64)
				out, _ := p["output_tokens"].(float64)
				if p["model"] != "demo-small" || in == 0 {
					t.Fatalf("context.compaction %v: want the summarisation call's model and usage", p)
				}
				summaries += demoSmallCost(int64(in), int64(out))
			}
			tr := readJSON[trajectoryJSON](t, s.get(t, "/v1/runs/"+run.ID+"/trajectory"), http.StatusOK)
			var steps float64
			for _, st := range tr.Steps {
				if st.Cost != nil {
					steps += *st.Cost
				}
			}
			rv := readJSON[costJSON](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
			want := steps + summaries
			if rv.Cost == nil || math.Abs(*rv.Cost-want) > 1e-12 || math.Abs(*rv.Cost-demoSmallCost(rv.Usage.InputTokens, rv.Usage.OutputTokens)) > 1e-12 {
				t.Fatalf("turn %d: the run's cost %s (usage %+v); want its steps' %g plus its summaries' %g", i, costString(rv.Cost), rv.Usage, steps, summaries)
			}
			if tr.Cost == nil || math.Abs(*tr.Cost-*rv.Cost) > 1e-12 {
				t.Fatalf("turn %d: the trajectory's cost %s, the run's %g", i, costString(tr.Cost), *rv.Cost)
			}
			return
		}
		t.Fatal("8 long turns in a 1,000-token window, and no run compacted")
	})
}
