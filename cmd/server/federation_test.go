package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// Federation between two agentd processes' worth of servers (two run()s
// on loopback): the local server's loop agents call the peer server's
// agents as tools and hand conversations off to a local agent and to a
// peer agent, seen through REST and through a2a-go's client.

// federatedConfig is the local server's configuration: peer is the other
// server's base URL.
func federatedConfig(t *testing.T, peer string) string {
	t.Helper()
	card := func(id string) string { return peer + "/agents/" + id + "/.well-known/agent-card.json" }
	yaml := `
federation: {allow_private: true}
providers:
  assistant-script:
    type: scripted
    rules:
      - {name: tell the time, after_tool: clock, reply: 'It is {{.ToolResult}}.'}
      - name: ask the clock
        match: '(?i)\btime\b'
        tool_calls: [{name: clock, arguments: {}}]
      - {name: explain, reply: 'Ask me the time.'}
  scout-script:
    type: scripted
    rules:
      - {name: report, after_tool: '*', reply: 'The peer agent answered: {{.ToolResult}}'}
      - name: ask the tck peer
        match: '^(tck-.*)$'
        tool_calls: [{name: ask_tck, arguments: '{"message": {{index .Groups 1 | json}}}'}]
      - name: ask with data
        match: '(?i)^ask with data\s+(.+)$'
        tool_calls: [{name: ask_echo, arguments: '{"message": {{index .Groups 1 | json}}, "data": {"order": 7, "items": ["a", "b"]}}'}]
      - name: ask the peer
        match: '(?i)^ask the peer:?\s+(.+)$'
        tool_calls: [{name: ask_echo, arguments: '{"message": {{index .Groups 1 | json}}}'}]
      - {name: explain, reply: 'Try "ask the peer hello".'}
  desk-script:
    type: scripted
    rules:
      - {name: handed off, after_tool: '*', reply: 'Handing you over.'}
      - name: time
        match: '(?i)\btime\b'
        tool_calls: [{name: transfer_to_assistant, arguments: '{"reason": "the assistant tells the time"}'}]
      - name: echo
        match: '(?i)^echo\b'
        tool_calls: [{name: transfer_to_echo, arguments: '{"reason": "echo repeats"}'}]
      - name: tck
        match: '^tck-'
        tool_calls: [{name: transfer_to_conformance, arguments: '{"reason": "a test-kit behaviour"}'}]
      - {name: explain, reply: 'Ask the time or say echo.'}
  hub-script:
    type: scripted
    rules:
      - {name: report, after_tool: ask_echo, reply: 'The peer agent answered: {{.ToolResult}}'}
      - {name: handed off, after_tool: '*', reply: 'Handing you over.'}
      - name: ask the peer
        match: '(?i)^ask the peer:?\s+(.+)$'
        tool_calls: [{name: ask_echo, arguments: '{"message": {{index .Groups 1 | json}}}'}]
      - name: echo
        match: '(?i)^echo\b'
        tool_calls: [{name: transfer_to_echo, arguments: '{"reason": "echo repeats"}'}]
      - {name: explain, reply: 'Ask the peer, or say echo.'}
agents:
  - {id: assistant, engine: loop, provider: assistant-script, tools: [clock], max_iterations: 3}
  - id: hub
    engine: loop
    provider: hub-script
    max_iterations: 3
    peer_tools:
      - {name: ask_echo, card: '` + card("echo") + `', description: Ask the echo peer.}
    handoffs: ['` + card("echo") + `']
  - id: scout
    engine: loop
    provider: scout-script
    max_iterations: 3
    peer_tools:
      - {name: ask_echo, card: '` + card("echo") + `', description: Ask the echo peer.}
      - {name: ask_tck, card: '` + card("conformance") + `', description: Ask the conformance peer.}
  - id: careful
    engine: loop
    provider: scout-script
    max_iterations: 3
    tools: [ask_echo]
    tool_settings: {ask_echo: {approval: required}}
    peer_tools:
      - {name: ask_echo, card: '` + card("echo") + `', description: Ask the echo peer.}
  - id: desk
    engine: loop
    provider: desk-script
    max_iterations: 3
    handoffs: [assistant, '` + card("echo") + `', '` + card("conformance") + `']
  - id: governed
    engine: loop
    provider: scout-script
    max_iterations: 3
    peer_tools:
      - {name: ask_echo, card: '` + card("echo") + `', description: Ask the echo peer.}
    governance:
      mode: enforce
      rules: [{name: no secrets, tool: 'ask_*', when: 'args.message.contains("secret")', verdict: deny}]
  - id: audited
    engine: loop
    provider: scout-script
    max_iterations: 3
    peer_tools:
      - {name: ask_echo, card: '` + card("echo") + `', description: Ask the echo peer.}
    governance:
      mode: audit
      rules: [{name: no secrets, tool: 'ask_*', when: 'args.message.contains("secret")', verdict: deny}]
`
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// federated starts the peer server (the demo) and the local one.
func federated(t *testing.T) (local, peer *server) {
	peer = start(t)
	local = start(t, "--config", federatedConfig(t, peer.base))
	return local, peer
}

// stream posts text to agent with ?stream=true and reads the whole run.
func (s *server) stream(t *testing.T, path, body string) []event {
	t.Helper()
	res := s.post(t, path, body)
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: status %d", path, res.StatusCode)
	}
	evs := readUntilEnd(t, bufio.NewReader(res.Body))
	checkSeqs(t, evs)
	return evs
}

func ofType(evs []event, typ string) []event {
	var out []event
	for _, ev := range evs {
		if ev.typ == typ {
			out = append(out, ev)
		}
	}
	return out
}

// progressText is the text the progress events of evs stream.
func progressText(evs []event) string {
	var b strings.Builder
	for _, ev := range ofType(evs, "progress") {
		s, _ := ev.data["text"].(string)
		b.WriteString(s)
	}
	return b.String()
}

func deltaText(evs []event) string { return strings.Join(deltas(evs), " ") }

func TestFederationPeerToolREST(t *testing.T) {
	local, peer := federated(t)

	t.Run("blocking", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "ask the peer hello there"}`), http.StatusOK)
		if v.Status != "completed" {
			t.Fatalf("run %+v", v)
		}
		if got := lastText(v); got != "The peer agent answered: hello there" {
			t.Fatalf("answer %q", got)
		}
	})

	t.Run("stream", func(t *testing.T) {
		evs := local.stream(t, "/v1/agents/scout/messages?stream=true", `{"text": "ask the peer stream 12 every 10ms"}`)
		if got := strings.Fields(progressText(evs)); strings.Join(got, " ") != strings.Join(toks(12), " ") {
			t.Fatalf("progress text %q, want the peer's 12 tokens", got)
		}
		if n := len(ofType(evs, "progress")); n < 12 {
			t.Fatalf("%d progress events: the peer's answer was not streamed", n)
		}
		for _, ev := range ofType(evs, "progress") {
			if ev.data["tool"] != "ask_echo" || ev.data["call_id"] == "" {
				t.Fatalf("progress %v: want tool ask_echo and its call id", ev.data)
			}
		}
		// The peer's tokens are progress, not the scout's answer.
		if got := deltaText(evs); got != "The peer agent answered: "+strings.Join(toks(12), " ") {
			t.Fatalf("answer deltas %q", got)
		}
	})

	t.Run("input required round trip", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "tck-input-required"}`), http.StatusOK)
		if v.Status != "input-required" {
			t.Fatalf("run %+v, want input-required (the peer's question)", v)
		}
		if q := lastText(v); !strings.Contains(q, "Please provide more input") {
			t.Fatalf("question %q, want the peer's", q)
		}
		v = readJSON[runJSON](t, local.post(t, "/v1/runs/"+v.ID+"/input", `{"text": "forty-two"}`), http.StatusOK)
		if v.Status != "completed" || lastText(v) != "The peer agent answered: Received: forty-two" {
			t.Fatalf("after the answer: %s %q", v.Status, lastText(v))
		}
	})

	t.Run("cancel while parked on the peer's question", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "tck-input-required"}`), http.StatusOK)
		if v.Status != "input-required" {
			t.Fatalf("run %+v, want input-required (the peer's question)", v)
		}
		res := local.post(t, "/v1/runs/"+v.ID+"/cancel", ``)
		res.Body.Close()
		if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
			t.Fatalf("cancel: status %d", res.StatusCode)
		}
		waitFor(t, "the caller canceled", func() bool {
			return readJSON[runJSON](t, local.get(t, "/v1/runs/"+v.ID), http.StatusOK).Status == "canceled"
		})
		waitFor(t, "the peer's conformance task canceled", func() bool {
			runs := readJSON[struct {
				Runs []runJSON `json:"runs"`
			}](t, peer.get(t, "/v1/runs?agent=conformance&status=canceled"), http.StatusOK)
			return len(runs.Runs) == 1
		})
	})

	t.Run("cancel reaches the peer task", func(t *testing.T) {
		res := local.post(t, "/v1/agents/scout/messages?stream=true", `{"text": "ask the peer stream 200 every 50ms"}`)
		defer res.Body.Close()
		br := bufio.NewReader(res.Body)
		var runID string
		for {
			ev, err := readEvent(br)
			if err != nil {
				t.Fatal(err)
			}
			if runID == "" {
				runID, _ = ev.data["run_id"].(string)
			}
			if ev.typ == "progress" && ev.data["text"] != nil {
				break // the peer is streaming
			}
		}
		if res := local.post(t, "/v1/runs/"+runID+"/cancel", ``); res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
			t.Fatalf("cancel: status %d", res.StatusCode)
		} else {
			res.Body.Close()
		}
		evs := readUntilEnd(t, br)
		if end := evs[len(evs)-1]; end.data["state"] != "canceled" {
			t.Fatalf("run.end %v, want canceled", end.data)
		}
		// The peer records its cancel on its own schedule: look until it has.
		for deadline := time.Now().Add(3 * time.Second); ; {
			runs := readJSON[struct {
				Runs []runJSON `json:"runs"`
			}](t, peer.get(t, "/v1/runs?agent=echo&status=canceled"), http.StatusOK)
			if len(runs.Runs) == 1 {
				break
			}
			if time.Now().After(deadline) {
				all := readJSON[struct {
					Runs []runJSON `json:"runs"`
				}](t, peer.get(t, "/v1/runs?agent=echo"), http.StatusOK)
				t.Fatalf("the peer's canceled echo runs: %+v, want the one the tool started (all: %+v)", runs.Runs, all.Runs)
			}
			time.Sleep(20 * time.Millisecond)
		}
	})

	t.Run("approval", func(t *testing.T) {
		type pending struct {
			runJSON
			Pending []struct {
				CallID string `json:"call_id"`
				Tool   string `json:"tool"`
			} `json:"pending_approvals"`
		}
		v := readJSON[pending](t, local.post(t, "/v1/agents/careful/messages", `{"text": "ask the peer approved words"}`), http.StatusOK)
		v = readJSON[pending](t, local.get(t, "/v1/runs/"+v.ID), http.StatusOK)
		if v.Status != "input-required" || len(v.Pending) != 1 || v.Pending[0].Tool != "ask_echo" {
			t.Fatalf("run %s, pending %+v: the peer call should wait for approval", v.Status, v.Pending)
		}
		body := `{"approvals": [{"call_id": "` + v.Pending[0].CallID + `", "decision": "approve"}]}`
		done := readJSON[runJSON](t, local.post(t, "/v1/runs/"+v.ID+"/input", body), http.StatusOK)
		if done.Status != "completed" || lastText(done) != "The peer agent answered: approved words" {
			t.Fatalf("after the approval: %s %q", done.Status, lastText(done))
		}
	})

	t.Run("data reaches the peer", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "ask with data parcel 7"}`), http.StatusOK)
		if v.Status != "completed" || lastText(v) != "The peer agent answered: parcel 7" {
			t.Fatalf("run %s %q", v.Status, lastText(v))
		}
		if !peerSaw(t, peer, "parcel 7", `{"items":["a","b"],"order":7}`) {
			t.Fatalf("no echo run on the peer got the message with the tool's data part")
		}
	})

	t.Run("artifacts are the result's data", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "tck-artifact-data"}`), http.StatusOK)
		if v.Status != "completed" {
			t.Fatalf("run %+v", v)
		}
		// The tool's result data is {"artifacts": […]}; with no answer text
		// it is also the content the model (and the transcript) reads.
		var result struct {
			Content string `json:"content"`
		}
		for _, m := range v.Messages {
			for _, p := range m.Parts {
				if len(p.ToolResult) > 0 {
					if err := json.Unmarshal(p.ToolResult, &result); err != nil {
						t.Fatal(err)
					}
				}
			}
		}
		var data struct {
			Artifacts []struct {
				Parts []struct {
					Data map[string]any `json:"data"`
				} `json:"parts"`
			} `json:"artifacts"`
		}
		if err := json.Unmarshal([]byte(result.Content), &data); err != nil || len(data.Artifacts) != 1 || len(data.Artifacts[0].Parts) != 1 ||
			data.Artifacts[0].Parts[0].Data["key"] != "value" || data.Artifacts[0].Parts[0].Data["count"] != float64(42) {
			t.Fatalf("tool result %s (%v): want the peer's data artifact as the result's data", result.Content, err)
		}
		if !strings.Contains(lastText(v), `"count":42`) {
			t.Fatalf("answer %q: the model reads the artifacts when there is no text", lastText(v))
		}
	})

	t.Run("governance denies a peer tool", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/governed/messages", `{"text": "ask the peer the secret plan"}`), http.StatusOK)
		if v.Status != "completed" || !strings.Contains(lastText(v), "denied by policy: no secrets") {
			t.Fatalf("run %s %q: want the model to read the denial", v.Status, lastText(v))
		}
		if peerSaw(t, peer, "the secret plan", "") {
			t.Fatalf("the denied call reached the peer")
		}
		v = readJSON[runJSON](t, local.post(t, "/v1/agents/governed/messages", `{"text": "ask the peer public words"}`), http.StatusOK)
		if lastText(v) != "The peer agent answered: public words" {
			t.Fatalf("an allowed call: %s %q", v.Status, lastText(v))
		}
	})

	t.Run("governance audits a peer tool", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/audited/messages", `{"text": "ask the peer an audited secret"}`), http.StatusOK)
		if v.Status != "completed" || lastText(v) != "The peer agent answered: an audited secret" {
			t.Fatalf("run %s %q: audit mode blocks nothing", v.Status, lastText(v))
		}
		var audit map[string]any
		for _, ev := range runEvents(t, local, v.ID) {
			if ev.typ == "governance" {
				audit, _ = ev.data["payload"].(map[string]any)
			}
		}
		if audit["tool"] != "ask_echo" || audit["verdict"] != "deny" || audit["enforced"] != false {
			t.Fatalf("governance event %v, want an unenforced deny of ask_echo", audit)
		}
	})

	t.Run("peer failure", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/scout/messages", `{"text": "tck-task-failure"}`), http.StatusOK)
		if v.Status != "completed" || !strings.Contains(lastText(v), "simulated failure") {
			t.Fatalf("run %s %q: the model should read the peer's failure", v.Status, lastText(v))
		}
	})
}

func TestFederationHandoffREST(t *testing.T) {
	local, peer := federated(t)
	card := func(id string) string { return peer.base + "/agents/" + id + "/.well-known/agent-card.json" }

	t.Run("local", func(t *testing.T) {
		evs := local.stream(t, "/v1/agents/desk/messages?stream=true", `{"text": "what time is it?"}`)
		h := ofType(evs, "handoff")
		if len(h) != 1 || h[0].data["from"] != "desk" || h[0].data["to"] != "assistant" {
			t.Fatalf("handoff events %v", h)
		}
		text := deltaText(evs)
		if !strings.HasPrefix(text, "Handing you over.") || !strings.Contains(text, "It is ") {
			t.Fatalf("deltas %q: want the desk's words, then the assistant's answer", text)
		}
		for _, ev := range evs[:indexOf(evs, h[0])] {
			if ev.typ == "delta" && ev.data["actor"] == "assistant" {
				t.Fatalf("the assistant spoke before the handoff event")
			}
		}
		runID, _ := evs[0].data["run_id"].(string)
		v := readJSON[runJSON](t, local.get(t, "/v1/runs/"+runID), http.StatusOK)
		if v.Status != "completed" || !strings.HasPrefix(lastText(v), "It is ") {
			t.Fatalf("run %s %q: want the assistant's answer last", v.Status, lastText(v))
		}
		// The handoff event names the target's child run, linked back.
		childID, _ := h[0].data["child_run_id"].(string)
		if childID == "" {
			t.Fatalf("handoff event %v names no child_run_id", h[0].data)
		}
		child := readJSON[struct {
			AgentID  string         `json:"agent_id"`
			Status   string         `json:"status"`
			Metadata map[string]any `json:"metadata"`
		}](t, local.get(t, "/v1/runs/"+childID), http.StatusOK)
		if child.AgentID != "assistant" || child.Status != "completed" || child.Metadata["parent_run_id"] != runID {
			t.Fatalf("child run %s: %+v, want the assistant's, completed, metadata.parent_run_id %s", childID, child, runID)
		}
	})

	t.Run("remote", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/desk/messages", `{"text": "echo across the hop"}`), http.StatusOK)
		if v.Status != "completed" || lastText(v) != "echo across the hop" {
			t.Fatalf("run %s %q: want the peer echo's answer", v.Status, lastText(v))
		}
	})

	t.Run("remote target asks", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/desk/messages", `{"text": "tck-input-required"}`), http.StatusOK)
		if v.Status != "input-required" || !strings.Contains(lastText(v), "Please provide more input") {
			t.Fatalf("run %s %q: want the peer target's question", v.Status, lastText(v))
		}
		v = readJSON[runJSON](t, local.post(t, "/v1/runs/"+v.ID+"/input", `{"text": "nine"}`), http.StatusOK)
		if v.Status != "completed" || lastText(v) != "Received: nine" {
			t.Fatalf("after the answer: %s %q, want the peer target's answer", v.Status, lastText(v))
		}
		n := 0
		for _, m := range v.Messages {
			if m.Role == "assistant" && len(m.Parts) > 0 && m.Parts[0].ToolCall != nil {
				n++
			}
		}
		if n != 1 {
			t.Fatalf("%d hand-off calls in the transcript, want 1", n)
		}
		res := local.get(t, "/v1/runs/"+v.ID+"/events")
		defer res.Body.Close()
		var log []event
		for br := bufio.NewReader(res.Body); ; {
			ev, err := readEvent(br)
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, ev)
		}
		if h := ofType(log, "handoff"); len(h) != 1 || h[0].data["to"] != card("conformance") {
			t.Fatalf("handoff events %v, want one, of the first attempt", h)
		}
		if ends := ofType(log, "run.end"); len(ends) != 2 || ends[1].data["state"] != "completed" {
			t.Fatalf("run.end events %v, want input-required then completed", ends)
		}
	})

	t.Run("cancel while the remote target asks", func(t *testing.T) {
		v := readJSON[runJSON](t, local.post(t, "/v1/agents/desk/messages", `{"text": "tck-input-required"}`), http.StatusOK)
		if v.Status != "input-required" {
			t.Fatalf("run %s %q: want the peer target's question", v.Status, lastText(v))
		}
		res := local.post(t, "/v1/runs/"+v.ID+"/cancel", ``)
		res.Body.Close()
		waitFor(t, "the desk's run canceled", func() bool {
			return readJSON[runJSON](t, local.get(t, "/v1/runs/"+v.ID), http.StatusOK).Status == "canceled"
		})
		waitFor(t, "the peer target's task canceled", func() bool {
			runs := readJSON[struct {
				Runs []runJSON `json:"runs"`
			}](t, peer.get(t, "/v1/runs?agent=conformance&status=canceled"), http.StatusOK)
			return len(runs.Runs) == 1
		})
	})
}

func TestFederationA2A(t *testing.T) {
	local, _ := federated(t)
	for _, b := range fedBindings {
		t.Run(b.name, func(t *testing.T) {
			t.Run("peer tool", func(t *testing.T) {
				c := local.fedClient(t, "scout", b.protocol, b.path)
				u := collectA2A(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("ask the peer stream 5")))
				if u.state != a2a.TaskStateCompleted || u.answer != "The peer agent answered: tok1 tok2 tok3 tok4 tok5" {
					t.Fatalf("state %s, answer %q", u.state, u.answer)
				}
				if !strings.Contains(u.notes["progress"], "tok5") {
					t.Fatalf("progress %q: want the peer's tokens in status updates", u.notes["progress"])
				}
				if !strings.Contains(u.notes["effect.intent"], `"tool":"ask_echo"`) || !strings.Contains(u.notes["effect.result"], "tok5") {
					t.Fatalf("effect notes %q / %q: want the peer call's intent and result in status updates", u.notes["effect.intent"], u.notes["effect.result"])
				}
			})
			t.Run("input required", func(t *testing.T) {
				c := local.fedClient(t, "scout", b.protocol, b.path)
				u := collectA2A(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("tck-input-required")))
				if u.state != a2a.TaskStateInputRequired {
					t.Fatalf("state %s, want input-required", u.state)
				}
				reply := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("seven"))
				reply.TaskID, reply.ContextID = u.taskID, u.contextID
				u = collectA2A(t, c, reply)
				if u.state != a2a.TaskStateCompleted || u.answer != "The peer agent answered: Received: seven" {
					t.Fatalf("state %s, answer %q", u.state, u.answer)
				}
			})
			for _, tc := range []struct{ name, text, to, answer string }{
				{"handoff local", "what time is it?", "assistant", "It is "},
				{"handoff remote", "echo over a2a", "", "echo over a2a"},
			} {
				t.Run(tc.name, func(t *testing.T) {
					c := local.fedClient(t, "desk", b.protocol, b.path)
					u := collectA2A(t, c, a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(tc.text)))
					if u.state != a2a.TaskStateCompleted || !strings.Contains(u.answer, "Handing you over.") || !strings.Contains(u.answer, tc.answer) {
						t.Fatalf("state %s, answer %q", u.state, u.answer)
					}
					if !strings.Contains(u.notes["handoff"], `"from":"desk"`) || !strings.Contains(u.notes["handoff"], tc.to) {
						t.Fatalf("handoff note %q", u.notes["handoff"])
					}
				})
			}
		})
	}
}

// a2aRun is what an A2A stream said about a task.
type a2aRun struct {
	taskID    a2a.TaskID
	contextID string
	state     a2a.TaskState
	answer    string
	notes     map[string]string // data-part notes of status updates by key, JSON, concatenated
}

// collectA2A streams msg and collects the task's updates until the stream ends.
func collectA2A(t *testing.T, c *a2aclient.Client, msg *a2a.Message) a2aRun {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	u := a2aRun{notes: map[string]string{}}
	for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
		switch v := ev.(type) {
		case *a2a.Task:
			u.taskID, u.contextID, u.state = v.ID, v.ContextID, v.Status.State
		case *a2a.TaskArtifactUpdateEvent:
			if v.Artifact != nil && v.Artifact.Name == "answer" {
				for _, p := range v.Artifact.Parts {
					if tx, ok := p.Content.(a2a.Text); ok {
						u.answer += string(tx)
					}
				}
			}
		case *a2a.TaskStatusUpdateEvent:
			u.state = v.Status.State
			if m := v.Status.Message; m != nil {
				for _, p := range m.Parts {
					if d, ok := p.Content.(a2a.Data); ok {
						if obj, ok := d.Value.(map[string]any); ok {
							for k, val := range obj {
								u.notes[k] += jsonString(t, val)
							}
						}
					}
				}
			}
		}
	}
	return u
}

// lastText is the text of the run's last message.
func lastText(v runJSON) string {
	if len(v.Messages) == 0 {
		return ""
	}
	var b strings.Builder
	for _, p := range v.Messages[len(v.Messages)-1].Parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func indexOf(evs []event, ev event) int {
	for i := range evs {
		if evs[i].seq == ev.seq {
			return i
		}
	}
	return -1
}

func jsonString(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fedBindings are the v1.0 bindings the federation tests go through.
var fedBindings = []struct {
	name     string
	protocol a2a.TransportProtocol
	path     string
}{
	{"jsonrpc", a2a.TransportProtocolJSONRPC, "/jsonrpc"},
	{"rest", a2a.TransportProtocolHTTPJSON, "/rest"},
}

// fedClient is a2a-go's client for agent over one binding, made from the
// agent's card.
func (s *server) fedClient(t *testing.T, agent string, protocol a2a.TransportProtocol, path string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), s.base+"/agents/"+agent)
	if err != nil {
		t.Fatalf("resolve the card of %s: %v", agent, err)
	}
	iface := &a2a.AgentInterface{URL: s.base + "/agents/" + agent + path, ProtocolBinding: protocol, ProtocolVersion: a2a.Version}
	c, err := a2aclient.NewFromEndpoints(context.Background(), []*a2a.AgentInterface{iface},
		a2aclient.WithJSONRPCTransport(s.client), a2aclient.WithRESTTransport(s.client))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateCard(card); err != nil {
		t.Fatalf("card: %v", err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestDemoScoutAndDesk is the README's walk-through of the demo's
// federation agents on one server: scout asks echo (through echo's A2A
// card) as a tool, desk hands off to the local assistant and to echo as a
// peer.
func TestDemoScoutAndDesk(t *testing.T) {
	s := start(t)
	evs := s.stream(t, "/v1/agents/scout/messages?stream=true", `{"text": "ask the peer hello there"}`)
	if progressText(evs) != "hello there" || deltaText(evs) != "The peer agent answered: hello there" {
		t.Fatalf("scout: progress %q, answer %q", progressText(evs), deltaText(evs))
	}
	for _, tc := range []struct{ text, to, answer string }{
		{"what time is it?", "assistant", "It is "},
		{"echo hello desk", "/agents/echo/.well-known/agent-card.json", "echo hello desk"},
	} {
		evs := s.stream(t, "/v1/agents/desk/messages?stream=true", `{"text": "`+tc.text+`"}`)
		h := ofType(evs, "handoff")
		if len(h) != 1 || h[0].data["to"] != tc.to {
			t.Fatalf("desk %q: handoff events %v", tc.text, h)
		}
		var after strings.Builder
		for _, ev := range evs[indexOf(evs, h[0]):] {
			if s, ok := ev.data["text"].(string); ok && ev.typ == "delta" {
				after.WriteString(s)
			}
		}
		if !strings.Contains(after.String(), tc.answer) {
			t.Fatalf("desk %q: after the handoff %q, want %q", tc.text, after.String(), tc.answer)
		}
	}
}

// TestFederationHandoffAuth: a hand-off target on a peer that wants an
// API key is declared {card, auth}; the key, read from the environment,
// goes with every call, and the conversation passes to the peer. Without
// it the peer refuses the hand-off and the run says so.
func TestFederationHandoffAuth(t *testing.T) {
	peer := startWithAuth(t, "", authYAML)
	card := peer.base + "/agents/echo/.well-known/agent-card.json"
	cfg := `
federation: {allow_private: true}
providers:
  desk-script:
    type: scripted
    rules:
      - {name: handed off, after_tool: '*', reply: 'Handing you over.'}
      - {name: echo, match: '(?i)^echo\b', tool_calls: [{name: transfer_to_echo, arguments: '{"reason": "echo repeats"}'}]}
agents:
  - id: desk
    engine: loop
    provider: desk-script
    max_iterations: 3
    handoffs: [{card: '` + card + `', auth: {api_key_env: PEER_KEY}}]
  - id: keyless
    engine: loop
    provider: desk-script
    max_iterations: 3
    handoffs: ['` + card + `']
`
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	local := startEnv(t, func(k string) string {
		if k == "PEER_KEY" {
			return acmeKey
		}
		return ""
	}, "--config", path)
	v := readJSON[runJSON](t, local.post(t, "/v1/agents/desk/messages", `{"text": "echo with a key"}`), http.StatusOK)
	if v.Status != "completed" || lastText(v) != "echo with a key" {
		t.Fatalf("run %s %q: want the authenticated peer's echo", v.Status, lastText(v))
	}
	v = readJSON[runJSON](t, local.post(t, "/v1/agents/keyless/messages", `{"text": "echo without a key"}`), http.StatusOK)
	if v.Status != "failed" || !strings.Contains(string(v.Error), "peer") {
		t.Fatalf("run %s %s: want a failure naming the peer that refused", v.Status, v.Error)
	}
}

// peerSaw says one of the peer's echo runs got a user message with text
// (and, when data is set, a data part encoding to data).
func peerSaw(t *testing.T, peer *server, text, data string) bool {
	t.Helper()
	runs := readJSON[struct {
		Runs []struct {
			ID string `json:"id"`
		} `json:"runs"`
	}](t, peer.get(t, "/v1/runs?agent=echo"), http.StatusOK)
	for _, r := range runs.Runs {
		v := readJSON[struct {
			Messages []struct {
				Role  string `json:"role"`
				Parts []struct {
					Type string          `json:"type"`
					Text string          `json:"text"`
					Data json.RawMessage `json:"data"`
				} `json:"parts"`
			} `json:"messages"`
		}](t, peer.get(t, "/v1/runs/"+r.ID), http.StatusOK)
		for _, m := range v.Messages {
			if m.Role != "user" || len(m.Parts) == 0 || m.Parts[0].Text != text {
				continue
			}
			if data == "" {
				return true
			}
			for _, p := range m.Parts[1:] {
				if p.Type == "data" && string(p.Data) == data {
					return true
				}
			}
		}
	}
	return false
}

// TestFederationOneAgentDoesAll: one loop agent with both a peer tool and
// a hand-off to a peer, over two servers: it calls the peer as a tool
// (progress, then its own answer), and it hands the conversation to the
// peer — over REST the stream goes on with the peer's tokens after the
// handoff event, over A2A the hand-off update comes before the peer's
// answer.
func TestFederationOneAgentDoesAll(t *testing.T) {
	local, peer := federated(t)
	card := peer.base + "/agents/echo/.well-known/agent-card.json"

	evs := local.stream(t, "/v1/agents/hub/messages?stream=true", `{"text": "ask the peer stream 4"}`)
	if progressText(evs) == "" || deltaText(evs) != "The peer agent answered: tok1 tok2 tok3 tok4" {
		t.Fatalf("peer tool: progress %q, answer %q", progressText(evs), deltaText(evs))
	}

	evs = local.stream(t, "/v1/agents/hub/messages?stream=true", `{"text": "echo stream 6"}`)
	h := ofType(evs, "handoff")
	if len(h) != 1 || h[0].data["to"] != card {
		t.Fatalf("handoff events %v, want one to %s", h, card)
	}
	var after []string
	for _, ev := range evs[indexOf(evs, h[0]):] {
		if s, ok := ev.data["text"].(string); ok && ev.typ == "delta" {
			after = append(after, strings.TrimSpace(s))
		}
	}
	if strings.Join(after, " ") != "echo stream 6" {
		t.Fatalf("deltas after the handoff %q, want the peer's echo streamed", after)
	}

	for _, b := range fedBindings {
		t.Run(b.name, func(t *testing.T) {
			c := local.fedClient(t, "hub", b.protocol, b.path)
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("echo over the hop"))
			handoffAt, answerAt, n := -1, -1, 0
			var answer string
			for ev, err := range c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg}) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				n++
				switch v := ev.(type) {
				case *a2a.TaskStatusUpdateEvent:
					if m := v.Status.Message; m != nil && handoffAt < 0 && strings.Contains(jsonString(t, m.Parts), `"handoff"`) {
						handoffAt = n
					}
				case *a2a.TaskArtifactUpdateEvent:
					for _, p := range v.Artifact.Parts {
						if tx, ok := p.Content.(a2a.Text); ok {
							answer += string(tx)
							if answerAt < 0 && strings.Contains(string(tx), "echo") {
								answerAt = n // the peer's first token
							}
						}
					}
				}
			}
			if handoffAt < 0 || answerAt < 0 || handoffAt > answerAt || !strings.Contains(answer, "echo over the hop") {
				t.Fatalf("hand-off update at %d, the peer's answer at %d (%q): want the hand-off first", handoffAt, answerAt, answer)
			}
		})
	}
}

// waitFor polls cond until it holds, failing after a few seconds: for
// what a server records on its own schedule.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 5s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
