package netguard

import (
	"context"
	"net"
	"net/netip"
	"testing"
	"time"

	"agentd/internal/errdefs"
)

func TestPrivate(t *testing.T) {
	for _, c := range []struct {
		ip      string
		private bool
	}{
		{"127.0.0.1", true}, {"::1", true}, {"10.1.2.3", true}, {"192.168.0.1", true}, {"172.16.0.1", true},
		{"169.254.169.254", true}, {"fe80::1", true}, {"0.0.0.0", true}, {"::ffff:127.0.0.1", true}, {"224.0.0.1", true},
		{"8.8.8.8", false}, {"2001:4860:4860::8888", false},
	} {
		if got := Private(netip.MustParseAddr(c.ip)); got != c.private {
			t.Errorf("Private(%s) = %v, want %v", c.ip, got, c.private)
		}
	}
}

func TestDialerRefusesLoopbackUnlessAllowed(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := Dialer(time.Second, false).DialContext(ctx, "tcp", ln.Addr().String()); !errdefs.IsForbidden(err) {
		t.Fatalf("dial loopback: %v, want forbidden", err)
	}
	c, err := Dialer(time.Second, true).DialContext(ctx, "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("dial loopback with allowPrivate: %v", err)
	}
	c.Close()
}
