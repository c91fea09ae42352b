package main

import (
	"context"
	"encoding/json"
	"testing"

	"agentd/internal/a2a/pushtest"
)

// TestAgentProtoWebhook: a run's webhook gets the run and its final values
// once it ended, after the receiver failed the first attempt (a retry);
// a webhook that is not an http(s) URL is refused (422) before any run.
func TestAgentProtoWebhook(t *testing.T) {
	rcv := pushtest.NewReceiver()
	defer rcv.Close()
	rcv.FailNextAt("/hook", pushtest.Fault{Status: 503})
	cfg := writePushConfig(t, nil, map[string]any{"allow_private": true, "timeout": "500ms", "retry_for": "10s"})
	s := start(t, "--config", cfg)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	s.call(t, "", "POST", "/lg/threads", `{}`).json(t, &th)
	if r := s.call(t, "", "POST", "/lg/threads/"+th.ThreadID+"/runs", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"x"}]},"webhook":"ftp://example.com/x"}`); r.status != 422 {
		t.Fatalf("an ftp webhook: %d %s", r.status, r.body)
	}
	r := s.call(t, "", "POST", "/lg/threads/"+th.ThreadID+"/runs", `{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"hello hook"}]},"webhook":"`+rcv.URL("/hook")+`"}`)
	var run struct {
		RunID string `json:"run_id"`
	}
	r.json(t, &run)
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	if err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(ns) > 0 }); err != nil {
		t.Fatalf("no webhook call: %v", err)
	}
	var got struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Values struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	n := rcv.Notifications()[0]
	if err := json.Unmarshal(n.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.RunID != run.RunID || got.Status != "success" || len(got.Values.Messages) != 2 || got.Values.Messages[1].Content != "hello hook" {
		t.Fatalf("webhook body %s", n.Body)
	}
	if rcv.Failed() != 1 {
		t.Fatalf("the receiver failed %d attempts, want 1 (then a retry)", rcv.Failed())
	}
}
