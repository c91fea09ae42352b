package config

import "embed"

// demoYAML is the embedded demo configuration (demo.yaml).
//
//go:embed demo.yaml
var demoYAML []byte

// demoFiles holds the files the demo configuration refers to (the refund
// flow's nodes), at the paths it uses.
//
//go:embed flows
var demoFiles embed.FS

// Demo returns the embedded demo configuration's text.
func Demo() []byte { return append([]byte(nil), demoYAML...) }
