package main

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/engine/loop"
)

// Context compaction through the REST API of a real server, on memstore
// and PostgreSQL: a loop agent with a small context window holds a
// multi-turn conversation in one context — long messages and calculator
// calls — which outgrows the window; the run that passes the threshold
// summarises the oldest history (a context.compaction event in its log)
// and still completes, and so do the runs after it, which start from the
// transcript with the summary in it.

// compactConfig is the demo configuration plus "compact", the demo
// assistant with a 1,000-token window compacted at half of it.
func compactConfig(t *testing.T) string {
	t.Helper()
	return demoConfigWith(t, func(cfg map[string]any) {
		cfg["agents"] = append(cfg["agents"].([]any), map[string]any{
			"id": "compact", "engine": "loop", "provider": "assistant-script", "tools": []string{"calculator"},
			"system_prompt": "You are a concise assistant.", "context_window": 1000, "compact_threshold": 0.5,
		})
	})
}

// compactionEvents reads a finished run's event log and returns the data
// of its context.compaction events.
func compactionEvents(t *testing.T, s *server, runID string) []map[string]any {
	t.Helper()
	res := s.get(t, "/v1/runs/"+runID+"/events")
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		t.Fatalf("events of %s: HTTP %d", runID, res.StatusCode)
	}
	var out []map[string]any
	for _, ev := range readUntilEnd(t, bufio.NewReader(res.Body)) {
		if ev.typ == "context.compaction" {
			out = append(out, ev.data)
		}
	}
	return out
}

func TestCompactionOverREST(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, compactConfig(t), dsn)
		long := strings.Repeat("Here is some background I want you to keep in mind. ", 8) // about 110 tokens
		turns := []string{long, "calculate 2*(3+4)", long, long, "calculate 6*7", long, long, "calculate 1+1"}
		contextID := ""
		compacted := 0
		for i, text := range turns {
			body := `{"text":"` + text + `"`
			if contextID != "" {
				body += `,"context_id":"` + contextID + `"`
			}
			code, run := s.postJSONRun(t, "/v1/agents/compact/messages", body+"}")
			if code != http.StatusOK || run.Status != "completed" {
				t.Fatalf("turn %d: HTTP %d, status %s, error %s", i, code, run.Status, run.Error)
			}
			contextID = run.ContextID
			if strings.HasPrefix(text, "calculate 6*7") && !strings.Contains(run.lastText(), "The result is 42") {
				t.Fatalf("turn %d answered %q", i, run.lastText())
			}
			for _, ev := range compactionEvents(t, s, run.ID) {
				p, _ := ev["payload"].(map[string]any)
				before, _ := p["tokens_before"].(float64)
				after, _ := p["tokens_after"].(float64)
				summarised, _ := p["messages_summarised"].(float64)
				if ev["actor"] != "compact" || before <= 500 || after > 500 || after >= before || summarised < 1 || p["context_window"] != float64(1000) {
					t.Fatalf("turn %d: context.compaction %v", i, ev)
				}
				compacted++
			}
		}
		t.Logf("%d compactions in %d turns", compacted, len(turns))
		if compacted == 0 {
			t.Fatal("the conversation outgrew the window without a context.compaction event")
		}
		if compacted >= len(turns)-1 {
			t.Fatalf("%d compactions in %d turns: the summaries in the transcript are not reused", compacted, len(turns))
		}
		if last := readJSON[approvalRun](t, s.get(t, "/v1/runs/"+runIDOfLast(t, s, contextID)), http.StatusOK); !strings.Contains(last.lastText(), "The result is 2") {
			t.Fatalf("last answer %q", last.lastText())
		}
	})
}

// runIDOfLast is the id of the latest run of contextID, from its
// transcript.
func runIDOfLast(t *testing.T, s *server, contextID string) string {
	t.Helper()
	page := readJSON[struct {
		Messages []struct {
			TaskID   string         `json:"task_id"`
			Role     string         `json:"role"`
			Metadata map[string]any `json:"metadata"`
		} `json:"messages"`
	}](t, s.get(t, "/v1/contexts/"+contextID+"/messages?limit=200"), http.StatusOK)
	summaries := 0
	for _, m := range page.Messages {
		if _, ok := m.Metadata["compaction"]; ok && m.Role == "system" {
			summaries++
		}
	}
	if summaries == 0 {
		t.Fatal("no summary message in the context's transcript")
	}
	if len(page.Messages) == 0 || page.Messages[len(page.Messages)-1].TaskID == "" {
		t.Fatalf("transcript: %d messages, the last without a task", len(page.Messages))
	}
	return page.Messages[len(page.Messages)-1].TaskID
}

// The same conversation through a2a-go's client: every message names the
// context of the first task, the tasks complete, and the task that
// compacted carries the summary in its history — an agent message whose
// metadata marks it as the compaction — which its run's log records as a
// context.compaction event.
func TestCompactionOverA2A(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		s := startStore(t, compactConfig(t), dsn)
		c := agentA2A(t, s, "compact")
		long := strings.Repeat("Here is some background I want you to keep in mind. ", 8)
		turns := []string{long, "calculate 2*(3+4)", long, long, "calculate 6*7", long, long, "calculate 1+1"}
		contextID, summarised := "", 0
		for i, text := range turns {
			msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
			msg.ContextID = contextID
			res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{Message: msg})
			if err != nil {
				t.Fatalf("turn %d: %v", i, err)
			}
			task, ok := res.(*a2a.Task)
			if !ok || task.Status.State != a2a.TaskStateCompleted || len(task.History) == 0 {
				t.Fatalf("turn %d: %#v, want a completed task", i, res)
			}
			if contextID != "" && task.ContextID != contextID {
				t.Fatalf("turn %d ran in context %s, not the conversation's %s", i, task.ContextID, contextID)
			}
			contextID = task.ContextID
			if last := task.History[len(task.History)-1].Parts[0].Text(); strings.HasPrefix(text, "calculate 6*7") && !strings.Contains(last, "The result is 42") {
				t.Fatalf("turn %d answered %q", i, last)
			}
			summaries := 0
			for _, m := range task.History {
				if _, ok := m.Metadata[loop.MetadataCompaction]; ok && m.Role == a2a.MessageRoleAgent && m.Parts[0].Text() != "" {
					summaries++
				}
			}
			if events := len(compactionEvents(t, s, string(task.ID))); events != summaries {
				t.Fatalf("turn %d: %d summaries in the task's history, %d context.compaction events in its run's log", i, summaries, events)
			}
			summarised += summaries
		}
		if summarised == 0 {
			t.Fatal("the conversation outgrew the window without a summary in any task's history")
		}
		if summarised >= len(turns)-1 {
			t.Fatalf("%d summaries in %d turns: the summaries in the transcript are not reused", summarised, len(turns))
		}
	})
}
