package config

import (
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// WriteDemo writes the demo configuration, with server overrides merged
// into its server section, as dir/agentd.yaml, and the files it refers to
// (the refund flow's nodes) beside it, so that the copy loads as the
// embedded demo does. It returns the configuration's path.
func WriteDemo(dir string, server map[string]any) (string, error) {
	var cfg map[string]any
	if err := yaml.Unmarshal(demoYAML, &cfg); err != nil {
		return "", fmt.Errorf("demo configuration: %w", err)
	}
	if len(server) > 0 {
		srv, _ := cfg["server"].(map[string]any)
		if srv == nil {
			srv = map[string]any{}
		}
		for k, v := range server {
			srv[k] = v
		}
		cfg["server"] = srv
	}
	b, err := yaml.Marshal(cfg)
	if len(server) == 0 {
		b, err = demoYAML, nil // as written, comments and all
	}
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if err := os.CopyFS(dir, demoFiles); err != nil {
		return "", fmt.Errorf("write the demo's files into %s: %w", dir, err)
	}
	path := filepath.Join(dir, "agentd.yaml")
	return path, os.WriteFile(path, b, 0o644)
}
