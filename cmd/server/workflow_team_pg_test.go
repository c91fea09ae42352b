package main

// Process-level test of a workflow's coordinator and mailboxes surviving
// their replica: real bin/server replicas on one PostgreSQL database, one
// killed (SIGKILL) while a researcher the coordinator directed streams.

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// teamWorkflow: the coordinator directs r1 and r2 (parallel) at kickoff;
// each reports to it with send_message, r1 then streams for 2 s (the
// window of the kill); c asks r2, which has finished, a question (r2
// resumes to answer) after sending d three messages, of which d's
// mailbox of 2 drops the third; the coordinator summarises r1's and r2's
// outputs in its final turn.
const teamWorkflow = `
server:
  lease_ttl: 2s
providers:
  team-script:
    type: scripted
    rules:
      - {after_tool: message_step, reply: directed}
      - {after_tool: narrate, reply: noted}
      - {after_tool: finalize, reply: done}
      - match: '(?s)^You coordinate.*The workflow is starting'
        tool_calls:
          - {name: message_step, arguments: {step: r1, text: focus on history}}
          - {name: message_step, arguments: {step: r2, text: focus on physics}}
      - match: '(?s)^You coordinate.*Every step has finished.*### r1\n([^\n]*).*### r2\n([^\n]*)'
        tool_calls:
          - {name: finalize, arguments: '{"summary": {{json (printf "Summary: %s | %s" (index .Groups 1) (index .Groups 2))}}}'}
      - match: '(?s)^You coordinate.*Answer or pass on'
        tool_calls: [{name: narrate, arguments: {text: a researcher reported}}]
      - {after_tool: send_message, match: 'focus on history', count: {number: '40', format: 'history%d', separator: ' '}, delay: 50ms}
      - {after_tool: send_message, match: 'focus on physics', reply: 'report: physics'}
      - {after_tool: send_message, prefix: 'Ask.', reply: 'c heard: {{.ToolResult}}'}
      - match: '(?s)^Message from coordinator:\nfocus on (\w+)'
        tool_calls: [{name: send_message, arguments: '{"text": {{json (printf "found %s" (index .Groups 1))}}}'}]
      - {prefix: "Message from c:\nwhat did you find?", reply: 'r2 says: physics it is'}
      - {prefix: "Message from c:\ntwo", reply: 'd got it'}
      - prefix: Ask.
        tool_calls:
          - {name: send_message, arguments: {to: d, text: one}}
          - {name: send_message, arguments: {to: d, text: two}}
          - {name: send_message, arguments: {to: d, text: three}}
          - {name: send_message, arguments: {to: r2, text: 'what did you find?'}}
agents:
  - id: team
    engine: graph
    provider: team-script
    coordinator: {}
    mailbox_size: 2
    workflow:
      name: team
      agents:
        researcher: {description: Researches one angle.}
        asker: {description: Asks.}
        reader: {description: Reads.}
      steps:
        - {id: r1, agent: researcher, instructions: Research.}
        - {id: r2, agent: researcher, instructions: Research.}
        - {id: c, agent: asker, instructions: Ask., dependsOn: [r1, r2]}
        - {id: d, agent: reader, instructions: Read., dependsOn: [c]}
`

func TestCoordinatorAndMailboxesSurviveTheirReplica(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := configFile(t, teamWorkflow)
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()

	id := readJSON[runJSON](t, a.postJSON(t, c, "/v1/agents/team/messages?wait=false", `{"text": "the moons of Jupiter"}`), 202).ID
	f := killDuring(ctx, t, c, a, id, func(ev event) bool {
		text, _ := ev.data["text"].(string)
		return ev.typ == "delta" && strings.Contains(text, "history3")
	})
	f.follow(ctx, t, b.base)
	checkExactlyOnce(t, f.evs)
	if st := waitRun(t, c, b, id, 5*time.Second); st.Status != "completed" || st.Attempt != 2 {
		t.Fatalf("run %s: %+v, want completed in attempt 2", id, st)
	}
	run := readJSON[runJSON](t, b.get(t, "/v1/runs/"+id), 200)
	if text := lastText(run); !strings.HasPrefix(text, "Summary: history1 history2") || !strings.HasSuffix(text, "| report: physics") {
		t.Errorf("answer %q, want the coordinator's summary of r1 and r2", text)
	}
	checkTeamNotes(t, f.evs)
	checkDeliveredOnce(t, ctx, dsn, id)
}

// checkTeamNotes: every message of the run is one workflow event, by id,
// across both attempts; the third message to d is the one drop.
func checkTeamNotes(t *testing.T, evs []event) {
	t.Helper()
	kinds := map[string]int{}
	ids := map[string]int{}
	var drops []string
	for _, ev := range evs {
		if ev.typ != "workflow" {
			continue
		}
		kind, _ := ev.data["kind"].(string)
		p, _ := ev.data["payload"].(map[string]any)
		kinds[kind]++
		if id, _ := p["id"].(string); id != "" && kind != "message_dropped" {
			ids[id]++
		}
		if kind == "message_dropped" {
			drops = append(drops, p["to"].(string)+":"+p["reason"].(string))
		}
	}
	for id, n := range ids {
		if n != 1 {
			t.Errorf("message %s sent %d times", id, n)
		}
	}
	want := map[string]int{"coordinator_message": 2, "coordinator_inbox_message": 2, "message_sent": 3, "coordinator_synthesis": 1, "resume_completed": 1}
	for kind, n := range want {
		if kinds[kind] != n {
			t.Errorf("%d %s events, want %d (all: %v)", kinds[kind], kind, n, kinds)
		}
	}
	if strings.Join(drops, ",") != "d:mailbox-full" {
		t.Errorf("drops %v, want d's mailbox full once", drops)
	}
}

// checkDeliveredOnce: no conversation of a step — a child run of its
// agent, its resumes included — holds a message twice, and each message
// reached its step.
func checkDeliveredOnce(t *testing.T, ctx context.Context, dsn, runID string) {
	t.Helper()
	db := dbConn(t, dsn)
	rows, err := db.Query(ctx, `SELECT t.id, t.metadata->>'parent_step', m.message
		FROM tasks t JOIN messages m ON m.task_id = t.id
		WHERE t.metadata->>'parent_run_id' = $1 AND m.message->>'role' = 'user'`, runID)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	perRun := map[string]int{}
	reached := map[string]bool{}
	for rows.Next() {
		var child, step string
		var raw json.RawMessage
		if err := rows.Scan(&child, &step, &raw); err != nil {
			t.Fatal(err)
		}
		var m struct {
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		}
		_ = json.Unmarshal(raw, &m)
		for _, p := range m.Parts {
			if strings.HasPrefix(p.Text, "Message from ") {
				perRun[child+" "+step+" ← "+p.Text]++
				reached[step+" ← "+p.Text] = true
			}
		}
	}
	for k, n := range perRun {
		if n != 1 {
			t.Errorf("%q: %d times in one conversation", k, n)
		}
	}
	for _, want := range []string{
		"r1 ← Message from coordinator:\nfocus on history", "r2 ← Message from coordinator:\nfocus on physics",
		"d ← Message from c:\none", "d ← Message from c:\ntwo", "r2 ← Message from c:\nwhat did you find?",
	} {
		if !reached[want] {
			t.Errorf("%q never reached its step (reached: %v)", want, reached)
		}
	}
}

// killDuring follows run id on replica a and SIGKILLs a at the first
// event strike matches; it returns the follower, to go on on another
// replica.
func killDuring(ctx context.Context, t *testing.T, c *http.Client, a *replica, id string, strike func(event) bool) *follower {
	t.Helper()
	f := &follower{c: c, runID: id}
	struck := make(chan struct{})
	var once sync.Once
	f.each = func(ev event) {
		if strike(ev) {
			once.Do(func() { close(struck) })
		}
	}
	streamCtx, stopStream := context.WithCancel(ctx)
	var reading sync.WaitGroup
	reading.Go(func() { _ = f.attach(streamCtx, a.base) })
	select {
	case <-struck:
	case <-ctx.Done():
		t.Fatalf("the awaited event never came on %s; %d events", a.name, len(f.evs))
	}
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)
	stopStream()
	reading.Wait()
	f.each = nil
	return f
}
