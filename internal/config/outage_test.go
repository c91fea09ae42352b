package config

import (
	"strings"
	"testing"
	"time"
)

func TestOutageSettings(t *testing.T) {
	const agents = "providers:\n  p: {type: scripted, rules: [{reply: hi}]}\nagents:\n  - {id: a, engine: loop, provider: p}\n"
	for _, tc := range []struct {
		server, wantErr string
		bound           time.Duration
	}{
		{"{}", "", 0},
		{"{outage_bound: 45s, replica_url: 'http://10.0.0.7:8080'}", "", 45 * time.Second},
		{"{lease_ttl: 2s, outage_bound: 4s}", "", 4 * time.Second},
		{"{lease_ttl: 10s, outage_bound: 4s}", `server.outage_bound: 4s is shorter than server.lease_ttl (10s)`, 0},
		{"{outage_bound: 1s}", `server.outage_bound: 1s is shorter than server.lease_ttl (5s)`, 0},
		{"{replica_url: '10.0.0.7:8080'}", `server.replica_url: "10.0.0.7:8080" is not an absolute http(s) URL`, 0},
	} {
		cfg, err := Parse([]byte("server: "+tc.server+"\n"+agents), "test.yaml")
		switch {
		case tc.wantErr != "":
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("server %s: %v, want %q", tc.server, err, tc.wantErr)
			}
		case err != nil:
			t.Errorf("server %s: %v", tc.server, err)
		case time.Duration(cfg.Server.OutageBound) != tc.bound:
			t.Errorf("server %s: outage_bound %v, want %v", tc.server, time.Duration(cfg.Server.OutageBound), tc.bound)
		}
	}
}
