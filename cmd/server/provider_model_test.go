package main

import (
	"net/http"
	"testing"
)

// TestProviderModelIsTheDefault: an agent without a model takes its
// provider's — a scripted provider's too, whose model name shows in the
// trajectory and is priced.
func TestProviderModelIsTheDefault(t *testing.T) {
	cfg := writeYAML(t, `
providers:
  script: {type: scripted, model: mini, rules: [{reply: hello there}]}
prices:
  mini: {input_per_million: 1, output_per_million: 2}
agents:
  - {id: a, engine: loop, provider: script}
`)
	s := start(t, "--config", cfg)
	run := readJSON[runJSON](t, s.post(t, "/v1/agents/a/messages", `{"text":"hi"}`), http.StatusOK)
	tr := readJSON[trajectoryJSON](t, s.get(t, "/v1/runs/"+run.ID+"/trajectory"), http.StatusOK)
	if len(tr.Steps) == 0 || tr.Steps[0].Model != "mini" || tr.Cost == nil || len(tr.UnpricedModels) != 0 {
		t.Fatalf("trajectory %+v, want a model step of mini, priced", tr)
	}
}
