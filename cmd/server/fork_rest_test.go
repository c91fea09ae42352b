package main

import (
	"strings"
	"testing"
)

// TestRESTCheckpointsAndFork: GET /v1/runs/{id}/checkpoints lists a run's
// checkpoints and POST /v1/runs/{id}/fork continues the conversation from
// one of them; the fork's board holds the conversation up to the
// checkpoint, not the runs after it.
func TestRESTCheckpointsAndFork(t *testing.T) {
	s := start(t)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, "", "POST", "/lg/threads", `{}`).json(t, &th)
	var runs []string
	for _, text := range []string{"one", "two", "three"} {
		r := s.call(t, "", "POST", "/lg/threads/"+th.ThreadID+"/runs", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"`+text+`"}]}}`)
		var run struct {
			RunID string `json:"run_id"`
		}
		r.json(t, &run)
		s.call(t, "", "GET", "/lg/threads/"+th.ThreadID+"/runs/"+run.RunID+"/join", "")
		runs = append(runs, run.RunID)
	}
	type checkpoints struct {
		Checkpoints []struct {
			ID       string `json:"id"`
			Messages []struct {
				Parts []struct {
					Text string `json:"text"`
				} `json:"parts"`
			} `json:"messages"`
		} `json:"checkpoints"`
	}
	texts := func(c checkpoints) string {
		var out []string
		for _, m := range c.Checkpoints[len(c.Checkpoints)-1].Messages {
			out = append(out, m.Parts[0].Text)
		}
		return strings.Join(out, ",")
	}
	var second checkpoints
	s.call(t, "", "GET", "/v1/runs/"+runs[1]+"/checkpoints", "").json(t, &second)
	if len(second.Checkpoints) != 1 || second.Checkpoints[0].ID != runs[1]+".1" || texts(second) != "one,one,two,two" {
		t.Fatalf("checkpoints of the second run: %+v", second)
	}
	if r := s.call(t, "", "POST", "/v1/runs/"+runs[1]+"/fork?checkpoint=2", `{"text":"x"}`); r.status != 400 {
		t.Fatalf("fork from a checkpoint the run lacks: %d %s", r.status, r.body)
	}
	var fork struct {
		ID        string `json:"id"`
		ContextID string `json:"context_id"`
		Status    string `json:"status"`
	}
	r := s.call(t, "", "POST", "/v1/runs/"+runs[1]+"/fork?checkpoint=1", `{"text":"two again"}`)
	r.json(t, &fork)
	if r.status != 200 || fork.Status != "completed" || fork.ContextID != th.ThreadID {
		t.Fatalf("fork: %d %s", r.status, r.body)
	}
	var forked checkpoints
	s.call(t, "", "GET", "/v1/runs/"+fork.ID+"/checkpoints", "").json(t, &forked)
	if got := texts(forked); got != "one,one,two,two,two again,two again" {
		t.Fatalf("the fork's conversation: %s", got)
	}
}
