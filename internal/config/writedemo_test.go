package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The written demo loads as the embedded one does, with its flows, and
// takes server overrides.
func TestWriteDemo(t *testing.T) {
	for _, server := range []map[string]any{nil, {"lease_ttl": "2s"}} {
		path, err := WriteDemo(t.TempDir(), server)
		if err != nil {
			t.Fatal(err)
		}
		cfg, err := Load(path)
		if err != nil {
			t.Fatalf("loading the written demo: %v", err)
		}
		demo, err := Load("")
		if err != nil {
			t.Fatal(err)
		}
		if len(cfg.Agents) != len(demo.Agents) {
			t.Errorf("%d agents, want the demo's %d", len(cfg.Agents), len(demo.Agents))
		}
		if server != nil && cfg.Server.LeaseTTL.Or(0).String() != "2s" {
			t.Errorf("lease_ttl %v, want the override 2s", cfg.Server.LeaseTTL.Or(0))
		}
	}
}

// The demo configuration alone, without the flow directory it names,
// fails to load with an error that says where flow paths resolve and how
// to get the demo's flows.
func TestDemoWithoutItsFlowsSaysWhatIsMissing(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentd.yaml")
	if err := os.WriteFile(path, Demo(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), `agents[3].flow: "flows/refund" does not exist`) || !strings.Contains(err.Error(), "--write-demo-config") {
		t.Fatalf("loading the demo without its flows: %v", err)
	}
}
