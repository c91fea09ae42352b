package main

import (
	"bufio"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
)

// refundRun is the part of a refund run these tests look at.
type refundRun struct {
	ID            string `json:"id"`
	Status        string `json:"status"`
	StatusMessage *struct {
		Parts []struct {
			Type string         `json:"type"`
			Text string         `json:"text"`
			Data map[string]any `json:"data"`
		} `json:"parts"`
	} `json:"status_message"`
}

// question is the run's prompt: its text and its constraints.
func (r refundRun) question() (string, map[string]any) {
	var text string
	var data map[string]any
	if r.StatusMessage != nil {
		for _, p := range r.StatusMessage.Parts {
			text += p.Text
			if p.Data != nil {
				data = p.Data
			}
		}
	}
	return text, data
}

// The refund demo walked with curl's requests over REST: each question is
// an input-required run whose status message holds the question and its
// constraints (also in the run's input events), POST /v1/runs/{id}/input
// answers it, and the run completes. A run canceled while it waits for an
// answer goes through the flow's interrupt handler and ends canceled with
// its goodbye.
func TestRefundFlowOverREST(t *testing.T) {
	s := start(t)
	run := readJSON[refundRun](t, s.post(t, "/v1/agents/refund/messages", `{"text":"I want a refund"}`), http.StatusOK)
	for _, step := range []struct{ answer, inputType string }{{"A-1001", "choice"}, {"damaged", "confirm"}} {
		if run.Status != "input-required" {
			t.Fatalf("run %s is %s before %q, want input-required", run.ID, run.Status, step.answer)
		}
		run = readJSON[refundRun](t, s.post(t, "/v1/runs/"+run.ID+"/input", `{"text":"`+step.answer+`"}`), http.StatusOK)
		if _, data := run.question(); data["input_type"] != step.inputType {
			t.Fatalf("after %q the question's constraints are %v, want input_type %s", step.answer, data, step.inputType)
		}
	}
	// A refused answer is asked again, with the reason.
	run = readJSON[refundRun](t, s.post(t, "/v1/runs/"+run.ID+"/input", `{"text":"maybe"}`), http.StatusOK)
	if text, _ := run.question(); run.Status != "input-required" || !strings.Contains(text, "yes") {
		t.Fatalf("after maybe: %s %q, want the question asked again", run.Status, text)
	}
	run = readJSON[refundRun](t, s.post(t, "/v1/runs/"+run.ID+"/input", `{"text":"y"}`), http.StatusOK)
	if run.Status != "completed" {
		t.Fatalf("after y: %s, want completed", run.Status)
	}
	inputs := 0
	for _, ev := range runEvents(t, s, run.ID) {
		if ev.typ == "input" {
			inputs++
		}
	}
	if inputs != 4 {
		t.Errorf("%d input events, want 4 (order, reason, confirm, confirm again)", inputs)
	}

	parked := readJSON[refundRun](t, s.post(t, "/v1/agents/refund/messages", `{"text":"refund"}`), http.StatusOK)
	readJSON[refundRun](t, s.post(t, "/v1/runs/"+parked.ID+"/cancel", ``), http.StatusAccepted)
	evs := runEvents(t, s, parked.ID) // to the end of the run
	if last := evs[len(evs)-1]; last.typ != "run.end" || last.data["state"] != "canceled" {
		t.Fatalf("last event %s %v, want run.end canceled", last.typ, last.data)
	}
	got := readJSON[refundRun](t, s.get(t, "/v1/runs/"+parked.ID), http.StatusOK)
	if text, _ := got.question(); got.Status != "canceled" || !strings.Contains(text, "Goodbye!") {
		t.Errorf("canceled parked run: %s %q, want canceled with the goodbye", got.Status, text)
	}
}

// runEvents reads a run's events until its stream closes (the run is
// terminal).
func runEvents(t *testing.T, s *server, runID string) []event {
	t.Helper()
	res := s.get(t, "/v1/runs/"+runID+"/events")
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	var out []event
	for {
		ev, err := readEvent(br)
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, ev)
	}
}

// TestRefundRollbackSaysWhy: order A-1002's notification bounces, the
// refund is undone, and the run fails saying why — the bounce, not a
// "retry later" that would hide it.
func TestRefundRollbackSaysWhy(t *testing.T) {
	s := start(t)
	run := readJSON[refundRun](t, s.post(t, "/v1/agents/refund/messages", `{"text":"I want a refund"}`), http.StatusOK)
	for _, answer := range []string{"A-1002", "wrong item", "yes"} {
		run = readJSON[refundRun](t, s.post(t, "/v1/runs/"+run.ID+"/input", `{"text":"`+answer+`"}`), http.StatusOK)
	}
	type failedRun struct {
		Status string `json:"status"`
		Error  struct {
			Class   string `json:"class"`
			Message string `json:"message"`
		} `json:"error"`
	}
	failed := readJSON[failedRun](t, s.get(t, "/v1/runs/"+run.ID), http.StatusOK)
	if failed.Status != "failed" || !strings.Contains(failed.Error.Message, "bounced") || !strings.Contains(failed.Error.Message, "rolled back") {
		t.Fatalf("run %s %+v, want failed naming the bounce and the rollback", failed.Status, failed.Error)
	}
}
