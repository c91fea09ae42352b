package main

import (
	"strings"
	"testing"
)

// TestConsoleRoutesWithAuth: the console's files are public, and the API
// routes it added need a credential and the right scope and see only the
// caller's tenant: GET /v1/contexts lists only the caller's conversations.
func TestConsoleRoutesWithAuth(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	for _, path := range []string{"/", "/console/js/main.js"} {
		if r := s.call(t, "", "GET", path, ""); r.status != 200 {
			t.Errorf("GET %s without a key: %d, want 200 (the console's files are public)", path, r.status)
		}
	}
	for _, path := range []string{"/v1/contexts", "/v1/server"} {
		if r := s.call(t, "", "GET", path, ""); r.status != 401 {
			t.Errorf("GET %s without a key: %d, want 401", path, r.status)
		}
	}
	own := seedAcme(t, s)
	mine := s.call(t, acmeKey, "GET", "/v1/contexts", "")
	if mine.status != 200 || !strings.Contains(mine.body, own.context) {
		t.Errorf("acme's contexts: %d %s, want its context %s", mine.status, mine.body, own.context)
	}
	other := s.call(t, globexKey, "GET", "/v1/contexts", "")
	if other.status != 200 || strings.TrimSpace(other.body) != `{"contexts":[],"next_cursor":""}` {
		t.Errorf("globex's contexts: %d %s, want none", other.status, other.body)
	}
	// The reader key has runs:read, which listing conversations needs.
	if r := s.call(t, readerKey, "GET", "/v1/contexts", ""); r.status != 200 {
		t.Errorf("acme's reader: %d %s, want 200", r.status, r.body)
	}
	if r := s.call(t, acmeKey, "GET", "/v1/server", ""); r.status != 200 || !strings.Contains(r.body, `"store":"memory"`) {
		t.Errorf("GET /v1/server: %d %s", r.status, r.body)
	}
}
