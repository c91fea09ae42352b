package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"agentd/internal/a2a/pushtest"
)

// TestAgentProtoWebhookSurvivesReplicaKill: a /lg run's webhook is
// durable. The run ends on replica A, whose delivery meets a receiver that
// is down; A is SIGKILLed while it retries, the receiver comes back, and
// replica B delivers the webhook — the run and its final values — once
// A's claim expired.
func TestAgentProtoWebhookSurvivesReplicaKill(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writePushConfig(t, map[string]any{"lease_ttl": "2s"},
		map[string]any{"allow_private": true, "timeout": "500ms", "claim_ttl": "2s", "retry_for": "1m"})
	rcv := pushtest.NewReceiver()
	defer rcv.Close()
	rcv.Down("/lg")
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	a := startReplica(t, "A", dsn, cfg)
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	lgPost(t, a.base+"/lg/threads", `{}`, &th)
	var run struct {
		RunID string `json:"run_id"`
	}
	lgPost(t, a.base+"/lg/threads/"+th.ThreadID+"/runs",
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"durable hook"}]},"webhook":"`+rcv.URL("/lg")+`"}`, &run)
	for rcv.Failed() == 0 {
		select {
		case <-ctx.Done():
			t.Fatal("the webhook was never tried on A")
		case <-time.After(10 * time.Millisecond):
		}
	}
	b := startReplica(t, "B", dsn, cfg)
	a.signal(syscall.SIGKILL)
	killedAt := time.Now()
	_ = a.waitExit(t, testTimeout)
	rcv.Up("/lg")
	if err := rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool { return len(ns) > 0 }); err != nil {
		t.Fatalf("no webhook after A died: %v\nB's log:\n%s", err, b.logs.String())
	}
	n := rcv.Notifications()[0]
	var got struct {
		RunID  string `json:"run_id"`
		Status string `json:"status"`
		Values struct {
			Messages []struct {
				Content string `json:"content"`
			} `json:"messages"`
		} `json:"values"`
	}
	if err := json.Unmarshal(n.Body, &got); err != nil {
		t.Fatal(err)
	}
	if got.RunID != run.RunID || got.Status != "success" || len(got.Values.Messages) != 2 || got.Values.Messages[1].Content != "durable hook" {
		t.Fatalf("webhook body %s", n.Body)
	}
	t.Logf("webhook delivered by B %v after A's kill (claim TTL 2s), after %d failed attempts on A", n.Received.Sub(killedAt), rcv.Failed())
}

// lgPost posts body to url and decodes the 200 answer into out.
func lgPost(t *testing.T, url, body string, out any) {
	t.Helper()
	res, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("POST %s: %d %s", url, res.StatusCode, b)
	}
	if err := json.Unmarshal(b, out); err != nil {
		t.Fatalf("POST %s: %v: %s", url, err, b)
	}
}
