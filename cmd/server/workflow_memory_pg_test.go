package main

// Process-level test of a workflow's shared memory surviving its replica:
// an entry written on the replica that is killed is read, after the
// resume, on the other.

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// memorySteps: scout writes an entry to shared memory, wait streams 60
// tokens 50 ms apart (3 s, the window of the kill), report reads the
// entry and answers with it.
const memorySteps = `
server:
  lease_ttl: 2s
providers:
  memo-script:
    type: scripted
    rules:
      - {after_tool: shared_memory_write, reply: 'noted'}
      - {after_tool: shared_memory_read, reply: 'report: {{.ToolResult}}'}
      - {prefix: Scout., tool_calls: [{name: shared_memory_write, arguments: {key: findings, value: three moons}}]}
      - {prefix: Wait., count: {number: '60', format: 'tok%d', separator: ' '}, delay: 50ms}
      - {prefix: Report., tool_calls: [{name: shared_memory_read, arguments: {key: scout/findings}}]}
agents:
  - id: memo
    engine: graph
    provider: memo-script
    shared_memory: true
    workflow:
      name: memo
      agents:
        scout: {description: Finds things.}
        waiter: {description: Takes its time.}
        writer: {description: Reports.}
      steps:
        - {id: find, agent: scout, instructions: Scout.}
        - {id: wait, agent: waiter, instructions: Wait., dependsOn: [find]}
        - {id: report, agent: writer, instructions: Report., dependsOn: [wait]}
`

func TestSharedMemorySurvivesItsReplica(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := configFile(t, memorySteps)
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := readJSON[runJSON](t, a.postJSON(t, c, "/v1/agents/memo/messages?wait=false", `{"text": "go"}`), 202).ID
	f := killDuring(ctx, t, c, a, id, func(ev event) bool {
		actor, _ := ev.data["actor"].(string)
		return ev.typ == "delta" && strings.Contains(actor, "node_wait")
	})
	f.follow(ctx, t, b.base)
	checkExactlyOnce(t, f.evs)
	if st := waitRun(t, c, b, id, 5*time.Second); st.Status != "completed" || st.Attempt != 2 {
		t.Fatalf("run %s: %+v, want completed in attempt 2", id, st)
	}
	if n := stepStarts(f.evs, "find"); n != 1 {
		t.Errorf("the writing step started %d times, want once (before the kill)", n)
	}
	var writes int
	for _, ev := range f.evs {
		if kind, _ := ev.data["kind"].(string); ev.typ == "workflow" && kind == "shared_memory_write" {
			writes++
		}
	}
	if writes != 1 {
		t.Errorf("%d shared_memory_write events, want 1", writes)
	}
	run := readJSON[runJSON](t, b.get(t, "/v1/runs/"+id), 200)
	if text := lastText(run); !strings.Contains(text, "report: three moons") {
		t.Errorf("answer %q, want the entry written before the kill", text)
	}
	cps := readJSON[struct {
		Checkpoints []struct {
			Vars map[string]json.RawMessage `json:"vars"`
		} `json:"checkpoints"`
	}](t, b.get(t, "/v1/runs/"+id+"/checkpoints"), 200)
	if n := len(cps.Checkpoints); n == 0 || !strings.Contains(string(cps.Checkpoints[n-1].Vars["shared_memory"]), `"scout/findings":"three moons"`) {
		t.Errorf("the run's last checkpoint does not show the shared memory: %+v", cps)
	}
}
