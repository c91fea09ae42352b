package main

import (
	"os"
	"strings"
	"testing"
	"time"
)

// TestApprovalTimeoutOfAnAuthenticatedTenant: with authentication on, a
// call parked for approval by tenant acme times out like the default
// tenant's — the sweep lists every tenant's waiting runs — and the model
// is told why; on memstore and PostgreSQL.
func TestApprovalTimeoutOfAnAuthenticatedTenant(t *testing.T) {
	eachStore(t, func(t *testing.T, dsn string) {
		cfg := guardedConfig(t, silentGovernor(t))
		f, err := os.OpenFile(cfg, os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			t.Fatal(err)
		}
		_, err = f.WriteString(authYAML)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			t.Fatal(err)
		}
		env := func(k string) string {
			if k == "DATABASE_URL" {
				return dsn
			}
			return authEnv[k]
		}
		s := startEnv(t, env, "--config", cfg)
		r := s.call(t, acmeKey, "POST", "/v1/agents/hasty/messages", `{"text":"delete late.txt"}`)
		var run approvalRun
		r.json(t, &run)
		if run.Status != "input-required" || len(run.PendingApprovals) != 1 {
			t.Fatalf("acme's delete: %d %s, want input-required with a pending approval", r.status, r.body)
		}
		deadline := time.Now().Add(testTimeout)
		for {
			var got approvalRun
			s.call(t, acmeKey, "GET", "/v1/runs/"+run.ID, "").json(t, &got)
			if got.Status == "completed" {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("acme's run still %s after %v: its approval never timed out", got.Status, testTimeout)
			}
			time.Sleep(50 * time.Millisecond)
		}
		events := s.call(t, acmeKey, "GET", "/v1/runs/"+run.ID+"/events", "")
		if !strings.Contains(events.body, "not approved within the approval timeout of 300ms") {
			t.Fatalf("acme's run events lack the timeout's rejection: %s", events.body)
		}
		if r := s.call(t, acmeKey, "POST", "/v1/runs/"+run.ID+"/input", `{"text":"approve"}`); r.status != 409 {
			t.Fatalf("acme's answer after the timeout: %d %s, want 409", r.status, r.body)
		}
	})
}
