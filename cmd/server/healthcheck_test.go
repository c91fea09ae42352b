package main

import (
	"io"
	"net"
	"testing"
)

// TestHealthcheckCommand: `server healthcheck` (the image's HEALTHCHECK)
// succeeds against a running server and fails where nothing listens.
func TestHealthcheckCommand(t *testing.T) {
	s := start(t)
	if err := run(t.Context(), []string{"healthcheck", "--url", s.base + "/healthz"}, noEnv, io.Discard, nil); err != nil {
		t.Fatalf("healthcheck of a running server: %v", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/healthz"
	ln.Close()
	if err := run(t.Context(), []string{"healthcheck", "--url", dead, "--timeout", "1s"}, noEnv, io.Discard, nil); err == nil {
		t.Fatal("healthcheck succeeded with no server")
	}
	if err := run(t.Context(), []string{"healthcheck", "--url", s.base + "/nothing-here"}, noEnv, io.Discard, nil); err == nil {
		t.Fatal("healthcheck succeeded on a 404")
	}
}
