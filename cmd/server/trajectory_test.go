package main

import (
	"encoding/json"
	"math"
	"net/http"
	"os"
	"testing"

	"sigs.k8s.io/yaml"

	"agentd/internal/config"
)

// A run's trajectory through the HTTP API, on memstore and on PostgreSQL:
// the model steps priced from the configuration's prices, the run's total
// cost, and the governance verdict on the tool step of a governed agent.

// pricedConfig is the demo configuration plus a guarded agent with a model
// name that has a price.
func pricedConfig(t *testing.T) string {
	t.Helper()
	path, err := config.WriteDemo(t.TempDir(), nil)
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var cfg map[string]any
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatal(err)
	}
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
	out, err := yaml.Marshal(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, out, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

type trajectoryJSON struct {
	Steps []struct {
		Type         string            `json:"type"`
		Model        string            `json:"model"`
		InputTokens  int64             `json:"input_tokens"`
		OutputTokens int64             `json:"output_tokens"`
		Cost         *float64          `json:"cost"`
		Tool         string            `json:"tool"`
		Governance   []json.RawMessage `json:"governance"`
	} `json:"steps"`
	Usage struct {
		TotalTokens int64 `json:"total_tokens"`
	} `json:"usage"`
	Cost           *float64 `json:"cost"`
	UnpricedModels []string `json:"unpriced_models"`
}

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
				want := (float64(st.InputTokens)*2.5 + float64(st.OutputTokens)*10) / 1e6
				if st.Model != "demo-small" || st.Cost == nil || math.Abs(*st.Cost-want) > 1e-12 || want == 0 {
					t.Fatalf("model step %+v: want model demo-small costing %g", st, want)
				}
				sum += *st.Cost
				tokens += st.InputTokens + st.OutputTokens
			case "tool":
				tools++
				if st.Tool != "read_file" || len(st.Governance) == 0 {
					t.Fatalf("tool step %+v: want read_file with its governance verdict", st)
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
		if tr.Cost == nil || math.Abs(*tr.Cost-sum) > 1e-12 || tr.Usage.TotalTokens != tokens || len(tr.UnpricedModels) != 0 {
			t.Fatalf("totals: cost %v (steps add up to %g), usage %d (steps %d), unpriced %q", tr.Cost, sum, tr.Usage.TotalTokens, tokens, tr.UnpricedModels)
		}

		// The demo's guarded agent names no model: its steps are unpriced,
		// and the trajectory says so rather than showing a cost.
		_, run = s.postJSONRun(t, "/v1/agents/guarded/messages", `{"text":"read notes.txt"}`)
		tr = readJSON[trajectoryJSON](t, s.get(t, "/v1/runs/"+run.ID+"/trajectory"), http.StatusOK)
		if tr.Cost != nil || len(tr.UnpricedModels) != 1 {
			t.Fatalf("unpriced run: cost %v, unpriced models %q; want no cost and one unpriced model", tr.Cost, tr.UnpricedModels)
		}
	})
}
