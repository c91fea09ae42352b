package main

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

// TestScheduleTenancy: a schedule is its tenant's — another tenant neither
// lists, reads nor deletes it, over REST or the Agent Protocol — and the
// runs it fires belong to its tenant.
func TestScheduleTenancy(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	end := time.Now().Add(2500 * time.Millisecond).UTC().Format(time.RFC3339Nano)
	r := s.call(t, acmeKey, "POST", "/v1/schedules",
		fmt.Sprintf(`{"agent_id":"echo","cron":"* * * * * *","text":"acme tick","end_at":%q}`, end))
	if r.status != 201 {
		t.Fatalf("acme's schedule: %d %s", r.status, r.body)
	}
	var sc scheduleJSON
	r.json(t, &sc)
	for _, c := range []struct{ method, path, body, want string }{
		{"GET", "/v1/schedules", "", `"total":0`},
		{"GET", "/v1/schedules/" + sc.ID, "", ""},
		{"DELETE", "/v1/schedules/" + sc.ID, "", ""},
		{"POST", "/lg/runs/crons/search", "{}", "[]"},
		{"DELETE", "/lg/runs/crons/" + sc.ID, "", ""},
	} {
		got := s.call(t, globexKey, c.method, c.path, c.body)
		if c.want != "" && (got.status != 200 || !strings.Contains(got.body, c.want)) || c.want == "" && got.status != 404 {
			t.Errorf("globex %s %s = %d %s", c.method, c.path, got.status, got.body)
		}
	}
	waitWithin(t, 15*time.Second, "the schedule's end", func() bool {
		var got scheduleJSON
		s.call(t, acmeKey, "GET", "/v1/schedules/"+sc.ID, "").json(t, &got)
		return got.ID == sc.ID && got.NextFireAt == nil
	})
	if r := s.call(t, acmeKey, "GET", "/v1/runs", ""); !strings.Contains(r.body, sc.ID) {
		t.Fatalf("acme's runs do not include its schedule's: %s", r.body)
	}
	if r := s.call(t, globexKey, "GET", "/v1/runs", ""); strings.Contains(r.body, sc.ID) {
		t.Fatalf("globex sees acme's scheduled runs: %s", r.body)
	}
}
