package main

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/a2a/pushtest"
)

// TestPushMetrics: the server delivers a task's updates to a webhook set
// inline over JSON-RPC (the demo configuration allows loopback webhooks),
// and /metrics counts them: the attempt the webhook failed, its retry, the
// updates delivered.
func TestPushMetrics(t *testing.T) {
	rcv := pushtest.NewReceiver()
	defer rcv.Close()
	rcv.FailNext(pushtest.Fault{Status: http.StatusServiceUnavailable})
	s := start(t, "--config", writeConfig(t, map[string]any{"metrics_on_main": true}))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, s.base+"/agents/echo/jsonrpc", strings.NewReader(`{"jsonrpc": "2.0", "id": 1, "method": "SendMessage", "params": {
		"message": {"messageId": "m-push", "role": "ROLE_USER", "parts": [{"text": "stream 3 every 5ms"}]},
		"configuration": {"returnImmediately": true, "taskPushNotificationConfig": {"url": "`+rcv.URL("/hook")+`", "token": "tok"}}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	res, err := s.client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	err = rcv.WaitFor(ctx, func(ns []pushtest.Notification) bool {
		for _, n := range ns {
			if st, ok := n.Event.(*a2a.TaskStatusUpdateEvent); ok && st.Status.State == a2a.TaskStateCompleted {
				return true
			}
		}
		return false
	})
	if err != nil {
		t.Fatalf("the webhook got no completed status (%d notifications): %v\n%s", len(rcv.Notifications()), err, s.logs)
	}
	// A delivery is counted once the webhook has answered: the last count
	// may trail the receiver by a moment.
	want := []string{
		`agentd_webhook_deliveries_total{outcome="failed"} 1`,
		`agentd_webhook_retries_total 1`,
		`agentd_webhook_deliveries_total{outcome="delivered"} ` + strconv.Itoa(len(rcv.Notifications())),
	}
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		body := scrape(t, s)
		missing := slices.DeleteFunc(slices.Clone(want), func(w string) bool { return strings.Contains(body, w+"\n") })
		if len(missing) == 0 {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("/metrics lacks %q:\n%s", missing, grep(body, "webhook"))
		case <-tick.C:
		}
	}
}
