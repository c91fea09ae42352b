package main

import (
	"net"
	"os"
	"testing"
)

func TestReplicaURL(t *testing.T) {
	host, _ := os.Hostname()
	if host == "" {
		host = "127.0.0.1"
	}
	for _, tc := range []struct {
		configured, addr, want string
	}{
		{"", "127.0.0.1:8080", "http://127.0.0.1:8080"},
		{"", "0.0.0.0:8080", "http://" + net.JoinHostPort(host, "8080")},
		{"", "[::]:8080", "http://" + net.JoinHostPort(host, "8080")},
		{"https://agentd-1.internal:8443/", "0.0.0.0:8080", "https://agentd-1.internal:8443"},
	} {
		addr, err := net.ResolveTCPAddr("tcp", tc.addr)
		if err != nil {
			t.Fatal(err)
		}
		if got := replicaURL(tc.configured, addr); got != tc.want {
			t.Errorf("replicaURL(%q, %s) = %q, want %q", tc.configured, tc.addr, got, tc.want)
		}
	}
}
