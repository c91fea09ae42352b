package main

import (
	"testing"
	"time"
)

// TestDemoAssistantPausesAndResumes walks the README's signals example on
// the demo configuration: "slowly calculate 6*7" thinks aloud before its
// tool call, a pause sent meanwhile parks the run once the calculator ran,
// and a resume finishes it with the calculator's answer.
func TestDemoAssistantPausesAndResumes(t *testing.T) {
	s := start(t)
	r := s.call(t, "", "POST", "/v1/agents/assistant/messages?wait=false", `{"text":"slowly calculate 6*7"}`)
	if r.status != 202 {
		t.Fatalf("send: %d %s", r.status, r.body)
	}
	var run runJSON
	r.json(t, &run)
	if r := s.call(t, "", "POST", "/v1/runs/"+run.ID+"/signals", `{"type":"pause","text":"coffee"}`); r.status != 202 {
		t.Fatalf("pause: %d %s, want 202 while the model thinks aloud", r.status, r.body)
	}
	waitStatus(t, s, run.ID, "paused")
	if r := s.call(t, "", "POST", "/v1/runs/"+run.ID+"/signals", `{"type":"resume"}`); r.status != 202 && r.status != 200 {
		t.Fatalf("resume: %d %s", r.status, r.body)
	}
	done := waitStatus(t, s, run.ID, "completed")
	last := done.Messages[len(done.Messages)-1]
	if len(last.Parts) == 0 || last.Parts[0].Text != "The result is 42." {
		t.Fatalf("answer %+v, want the calculator's result", last)
	}
}

// waitStatus polls run id until its status is want.
func waitStatus(t *testing.T, s *server, id, want string) runJSON {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for {
		var run runJSON
		s.call(t, "", "GET", "/v1/runs/"+id, "").json(t, &run)
		if run.Status == want {
			return run
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s", id, run.Status, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
