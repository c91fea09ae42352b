package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

// effectsRig is a keyed and an unkeyed service, a configuration using
// them, and replica B (never faulted) that takes the runs over.
type effectsRig struct {
	keyed, unkeyed *effectService
	dsn, cfg       string
	b              *replica
	c              *http.Client
}

func newEffectsRig(t *testing.T) *effectsRig {
	t.Helper()
	skipShort(t)
	g := &effectsRig{keyed: newEffectService(t, true), unkeyed: newEffectService(t, false), dsn: sharedDSN(t), c: newClient(t)}
	g.cfg = effectsConfig(t, g.keyed, g.unkeyed)
	g.b = startReplica(t, "B", g.dsn, g.cfg)
	return g
}

// cut submits text to agent on a replica A that kills itself at the fault
// point, waits for A to die, and follows the run on B until it ends (or
// parks): the run's events and id.
func (g *effectsRig) cut(t *testing.T, point, agent, text string) (string, []event) {
	t.Helper()
	id := g.kill(t, point, agent, text)
	return id, g.events(t, id)
}

// kill submits text to agent on a replica A that kills itself at point,
// and waits for A to die; it returns the run's id.
func (g *effectsRig) kill(t *testing.T, point, agent, text string) string {
	t.Helper()
	a := startReplicaEnv(t, "A-"+point, g.dsn, g.cfg, []string{effectFaultEnv + "=" + point})
	// A may die before it answers: the run is found by its context.
	ctxID := "fx-" + point + "-" + strings.ReplaceAll(text, " ", "-")
	body, _ := json.Marshal(map[string]string{"text": text, "context_id": ctxID})
	if res, err := g.c.Post(a.base+"/v1/agents/"+agent+"/messages?wait=false", "application/json", bytes.NewReader(body)); err == nil {
		res.Body.Close()
	}
	if err := a.waitExit(t, replicaTestTimeout); err == nil || !strings.Contains(a.logs.String(), "killing this process at "+point) {
		t.Fatalf("replica A was not killed at %s (exit %v):\n%s", point, err, a.logs)
	}
	runs := readJSON[struct {
		Runs []runJSON `json:"runs"`
	}](t, g.b.get(t, "/v1/runs?context="+ctxID), http.StatusOK)
	if len(runs.Runs) != 1 {
		t.Fatalf("context %s has %d runs, want 1", ctxID, len(runs.Runs))
	}
	return runs.Runs[0].ID
}

// events follows run id on B to its end and returns its log.
func (g *effectsRig) events(t *testing.T, id string) []event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	f := &follower{c: g.c, runID: id}
	f.follow(ctx, t, g.b.base)
	return f.evs
}

// parkedOnB waits until run id waits for input on B.
func (g *effectsRig) parkedOnB(t *testing.T, id string) approvalRun {
	t.Helper()
	deadline := time.Now().Add(replicaTestTimeout)
	for {
		r := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
		if r.Status != "working" && r.Status != "submitted" || time.Now().After(deadline) {
			return r
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// oneKey checks that the run's log intends one call, and returns its key.
func oneKey(t *testing.T, evs []event) string {
	t.Helper()
	keys := map[string]bool{}
	for _, k := range keysOf(effectEvents(evs, "effect.intent")) {
		keys[k] = true
	}
	if len(keys) != 1 {
		t.Fatalf("intents of %d keys in the log, want 1: %v", len(keys), keys)
	}
	for k := range keys {
		return k
	}
	return ""
}

// TestToolEffectsExactlyOnceAcrossKills: a loop agent calls the keyed
// HTTP tool; the replica running it is SIGKILLed at each fault point —
// before the intent is durable, after it and before the request, after the
// request and before the result is durable, after the result — and the
// run resumes on replica B. The service sees exactly one effect, under the
// key the log recorded, and the run's answer is whole.
func TestToolEffectsExactlyOnceAcrossKills(t *testing.T) {
	g := newEffectsRig(t)
	cases := []struct {
		point    string
		amount   string
		requests int // the retried point sends the key twice
		doubt    bool
	}{
		{"before-intent", "11", 1, false},
		{"after-intent", "12", 1, true},
		{"before-result", "13", 2, true},
		{"after-result", "14", 1, false},
	}
	for _, tc := range cases {
		t.Run(tc.point, func(t *testing.T) {
			id, evs := g.cut(t, tc.point, "payer-retry", "charge "+tc.amount)
			checkExactlyOnce(t, evs)
			key := oneKey(t, evs)
			requests, effects := g.keyed.counts()
			if effects[key] != 1 || requests[key] != tc.requests {
				t.Errorf("service saw %d effect(s) and %d request(s) under the run's key %s, want 1 and %d", effects[key], requests[key], key, tc.requests)
			}
			if n := len(effectEvents(evs, "effect.doubt")); (n > 0) != tc.doubt {
				t.Errorf("%d doubt event(s); a doubt expected: %v", n, tc.doubt)
			}
			g.checkTrajectory(t, id, tc.doubt)
			run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
			if run.Status != "completed" || !strings.HasPrefix(answerText(run), "Done: charge ch-") || !strings.HasSuffix(answerText(run), " of "+tc.amount+".") {
				t.Errorf("run %s: %s %q, want completed with the whole answer", id, run.Status, answerText(run))
			}
		})
	}
	_, effects := g.keyed.counts()
	for key, n := range effects {
		if n != 1 {
			t.Errorf("key %s: %d effects", key, n)
		}
	}
}

// TestFlowActionEffectExactlyOnce: a flow's action calls the keyed HTTP
// tool with the action's key; cut after the request and before its result
// was durable, the flow replays the action in doubt, retries it with the
// same key, and the service charged once.
func TestFlowActionEffectExactlyOnce(t *testing.T) {
	g := newEffectsRig(t)
	id, evs := g.cut(t, "before-result", "pay-flow", "pay please")
	checkExactlyOnce(t, evs)
	key := oneKey(t, evs)
	requests, effects := g.keyed.counts()
	if effects[key] != 1 || requests[key] != 2 || resolution(t, evs) != "retried" {
		t.Errorf("under %s: %d effect(s), %d request(s); want 1 and 2 (retried)", key, effects[key], requests[key])
	}
	run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
	if run.Status != "completed" || !strings.Contains(answerText(run), "Paid: charge ch-1 of 77") {
		t.Errorf("run: %s %q", run.Status, answerText(run))
	}
}

// TestFlowActionInDoubtAsksAPerson: under in_doubt ask, a flow's action
// cut after its request and before its result was durable waits for a
// person (a question naming the action and its key); a nonsense answer is
// asked again, and "skip: <result>" answers the action without running it
// again — the service saw one request and one effect, and the flow goes on
// with the given result.
func TestFlowActionInDoubtAsksAPerson(t *testing.T) {
	g := newEffectsRig(t)
	id := g.kill(t, "before-result", "pay-flow-ask", "pay please")
	parked := g.parkedOnB(t, id)
	if parked.Status != "input-required" || !strings.Contains(parked.lastText(), "is in doubt") {
		t.Fatalf("after the cut: %s %q; want the action in doubt asked about", parked.Status, parked.lastText())
	}
	again := readJSON[approvalRun](t, g.b.postJSON(t, g.c, "/v1/runs/"+id+"/input", `{"text":"maybe"}`), http.StatusOK)
	if again.Status != "input-required" {
		t.Fatalf("after a nonsense answer: %s, want the question again", again.Status)
	}
	done := readJSON[approvalRun](t, g.b.postJSON(t, g.c, "/v1/runs/"+id+"/input", `{"text":"skip: ch-by-hand"}`), http.StatusOK)
	if done.Status != "completed" || !strings.Contains(answerText(done), "Paid: ch-by-hand") {
		t.Fatalf("after skip: %s %q, want completed with the given result", done.Status, answerText(done))
	}
	evs := g.events(t, id)
	key := oneKey(t, evs)
	if r := resolution(t, evs); r != "skipped" {
		t.Errorf("resolution %q, want skipped", r)
	}
	requests, effects := g.keyed.counts()
	if effects[key] != 1 || requests[key] != 1 {
		t.Errorf("under %s: %d effect(s), %d request(s); want 1 and 1 (not run again)", key, effects[key], requests[key])
	}
}

// resolution is the resolution the log records for the run's doubt.
func resolution(t *testing.T, evs []event) string {
	t.Helper()
	res := effectEvents(evs, "effect.resolved")
	if len(res) != 1 {
		t.Fatalf("%d resolution events, want 1", len(res))
	}
	r, _ := res[0].data["resolution"].(string)
	return r
}

// TestToolEffectsInDoubtPolicies: each policy on a call cut after its
// request and before its result was durable (and reconcile also before the
// request): reconcile finds the effect (or its absence) with the status
// call; fail fails the run naming the call; ask parks the run with the
// call in the approvals inbox, and a person's skip or retry resumes it.
func TestToolEffectsInDoubtPolicies(t *testing.T) {
	g := newEffectsRig(t)
	t.Run("reconcile finds the effect", func(t *testing.T) {
		id, evs := g.cut(t, "before-result", "payer-reconcile", "pay 21")
		key := oneKey(t, evs)
		requests, effects := g.unkeyed.counts()
		if r := resolution(t, evs); r != "reconciled" || effects[key] != 1 || requests[key] != 1 {
			t.Errorf("resolution %q, %d effect(s), %d request(s); want reconciled, 1, 1", r, effects[key], requests[key])
		}
		run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
		if run.Status != "completed" || answerText(run) == "" || !strings.Contains(answerText(run), " of 21") {
			t.Errorf("run: %s %q", run.Status, answerText(run))
		}
	})
	t.Run("reconcile finds no effect", func(t *testing.T) {
		_, evs := g.cut(t, "after-intent", "payer-reconcile", "pay 22")
		key := oneKey(t, evs)
		requests, effects := g.unkeyed.counts()
		if r := resolution(t, evs); r != "absent" || effects[key] != 1 || requests[key] != 1 {
			t.Errorf("resolution %q, %d effect(s), %d request(s); want absent, 1, 1", r, effects[key], requests[key])
		}
	})
	t.Run("fail names the call", func(t *testing.T) {
		id, evs := g.cut(t, "before-result", "payer-fail", "pay 23")
		key := oneKey(t, evs)
		run := readJSON[approvalRun](t, g.b.get(t, "/v1/runs/"+id), http.StatusOK)
		if run.Status != "failed" || !strings.Contains(string(run.Error), "pay") || !strings.Contains(string(run.Error), key) {
			t.Errorf("run: %s, error %s; want failed naming the call pay and key %s", run.Status, run.Error, key)
		}
		if _, effects := g.unkeyed.counts(); effects[key] != 1 {
			t.Errorf("%d effects, want 1 (never re-run)", effects[key])
		}
	})
	t.Run("ask then skip", func(t *testing.T) {
		g.askThen(t, "pay 24", g.unkeyed, `"decision":"skip","result":"paid by hand"`, "Done: paid by hand.", 1)
	})
	t.Run("ask then retry on a keyed tool", func(t *testing.T) {
		g.askThen(t, "charge 25", g.keyed, `"decision":"approve"`, "Done: charge ch-", 2)
	})
	// B found and resolved every doubt: its metrics count them.
	res := g.b.get(t, "/metrics")
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	for res, n := range map[string]int{"found": 5, "reconciled": 1, "absent": 1, "failed": 1, "skipped": 1, "retried": 1} {
		if line := fmt.Sprintf(`agentd_tool_effect_doubts_total{resolution=%q} %d`, res, n); !strings.Contains(string(body), line) {
			t.Errorf("B's metrics lack %s", line)
		}
	}
}

// askThen cuts a call of text after its request, finds the run parked
// with the call in doubt in the approvals inbox, answers with decision and
// checks the answer and the service's counts (one effect; requests).
func (g *effectsRig) askThen(t *testing.T, text string, svc *effectService, decision, answer string, requests int) {
	t.Helper()
	id := g.kill(t, "before-result", "payer-ask", text)
	parked := g.parkedOnB(t, id)
	if parked.Status != "input-required" || len(parked.PendingApprovals) != 1 || parked.PendingApprovals[0].Tool == "" {
		t.Fatalf("after the cut: %s, pending %+v; want the call in doubt waiting", parked.Status, parked.PendingApprovals)
	}
	body := `{"approvals":[{"call_id":"` + parked.PendingApprovals[0].CallID + `",` + decision + `}]}`
	done := readJSON[approvalRun](t, g.b.postJSON(t, g.c, "/v1/runs/"+id+"/input", body), http.StatusOK)
	if done.Status != "completed" || !strings.HasPrefix(answerText(done), answer) {
		t.Errorf("after the answer: %s %q, want completed %q…", done.Status, answerText(done), answer)
	}
	evs := g.events(t, id)
	key := oneKey(t, evs)
	if r := resolution(t, evs); r != "skipped" && r != "retried" {
		t.Errorf("resolution %q", r)
	}
	got, effects := svc.counts()
	if effects[key] != 1 || got[key] != requests {
		t.Errorf("%d effect(s), %d request(s) under %s; want 1, %d", effects[key], got[key], key, requests)
	}
}

// checkTrajectory checks that run id's trajectory shows, on its tool
// steps, the call's intent and result, and its doubt when there was one.
func (g *effectsRig) checkTrajectory(t *testing.T, id string, doubt bool) {
	t.Helper()
	tr := readJSON[struct {
		Steps []struct {
			Type    string `json:"type"`
			Effects []struct {
				Phase string `json:"phase"`
			} `json:"effects"`
		} `json:"steps"`
	}](t, g.b.get(t, "/v1/runs/"+id+"/trajectory"), http.StatusOK)
	phases := map[string]bool{}
	for _, s := range tr.Steps {
		for _, e := range s.Effects {
			phases[e.Phase] = s.Type == "tool"
		}
	}
	if !phases["intent"] || !phases["result"] || phases["doubt"] != doubt {
		t.Errorf("effect phases on the trajectory's tool steps: %v; want intent, result and a doubt: %v", phases, doubt)
	}
}
