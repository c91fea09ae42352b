package main

import (
	"net/http"
	"strings"
	"syscall"
	"testing"
)

// TestApprovalSurvivesReplicaKill: the guarded agent's delete parks on
// replica A waiting for approval; A is SIGKILLed. The pending approval is
// in the run's checkpoint and its prompt in the task, so replica B shows
// it, takes the answer and runs the approved call; a second answer to the
// resolved call is a 409.
func TestApprovalSurvivesReplicaKill(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)

	parked := readJSON[approvalRun](t, a.postJSON(t, c, "/v1/agents/guarded/messages", `{"text":"delete draft.txt"}`), http.StatusOK)
	if parked.Status != "input-required" || len(parked.PendingApprovals) != 1 {
		t.Fatalf("delete on A: %s, pending %+v", parked.Status, parked.PendingApprovals)
	}
	a.signal(syscall.SIGKILL)
	_ = a.waitExit(t, testTimeout)

	seen := readJSON[approvalRun](t, b.get(t, "/v1/runs/"+parked.ID), http.StatusOK)
	if seen.Status != "input-required" || len(seen.PendingApprovals) != 1 || seen.PendingApprovals[0].CallID != parked.PendingApprovals[0].CallID {
		t.Fatalf("on B after A's death: %s, pending %+v", seen.Status, seen.PendingApprovals)
	}
	answer := `{"approvals":[{"call_id":"` + seen.PendingApprovals[0].CallID + `","decision":"approve"}]}`
	done := readJSON[approvalRun](t, b.postJSON(t, c, "/v1/runs/"+parked.ID+"/input", answer), http.StatusOK)
	if done.Status != "completed" || !strings.Contains(done.lastText(), "deleted draft.txt") {
		t.Fatalf("after the approval on B: %s %q", done.Status, done.lastText())
	}
	res := b.postJSON(t, c, "/v1/runs/"+parked.ID+"/input", answer)
	res.Body.Close()
	if res.StatusCode != http.StatusConflict {
		t.Fatalf("second answer: HTTP %d, want 409", res.StatusCode)
	}
}
