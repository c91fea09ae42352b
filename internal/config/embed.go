package config

import _ "embed"

// demoYAML is the embedded demo configuration (demo.yaml).
//
//go:embed demo.yaml
var demoYAML []byte

// Demo returns the embedded demo configuration's text.
func Demo() []byte { return append([]byte(nil), demoYAML...) }
