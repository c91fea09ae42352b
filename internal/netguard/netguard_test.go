package netguard

import (
	"context"
	"net"
	"net/netip"
	"strings"
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
		{"100.64.0.1", true}, {"100.100.100.200", true}, {"100.127.255.255", true}, {"192.0.0.170", true},
		{"0.1.2.3", true}, {"198.18.0.1", true}, {"255.255.255.255", true}, {"240.0.0.1", true},
		{"::ffff:100.100.100.200", true}, {"::ffff:0.0.0.1", true},
		{"64:ff9b::a9fe:a9fe", true}, {"64:ff9b::7f00:1", true}, {"64:ff9b::6464:64c8", true}, {"64:ff9b::a00:1", true},
		{"64:ff9b:1::808:808", true}, {"2002:a9fe:a9fe::1", true}, {"::7f00:1", true},
		{"8.8.8.8", false}, {"2001:4860:4860::8888", false}, {"100.63.255.255", false}, {"100.128.0.1", false},
		{"192.0.1.1", false}, {"64:ff9b::808:808", false}, {"2002:808:808::1", false},
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

// TestCheckAddressRefusesSpecialRanges: the dial-time check refuses the
// shared address space (cloud metadata at 100.100.100.200) and a NAT64
// address of the link-local metadata endpoint, naming the address.
func TestCheckAddressRefusesSpecialRanges(t *testing.T) {
	for _, a := range []string{"100.100.100.200:80", "[64:ff9b::a9fe:a9fe]:80", "[::ffff:100.64.0.1]:443", "0.0.0.0:80"} {
		err := CheckAddress("tcp", a, nil)
		if !errdefs.IsForbidden(err) || !strings.Contains(err.Error(), "not public") {
			t.Errorf("CheckAddress(%s): %v, want forbidden, not public", a, err)
		}
	}
	if err := CheckAddress("tcp", "[64:ff9b::808:808]:443", nil); err != nil {
		t.Errorf("CheckAddress of NAT64 to a public address: %v, want allowed", err)
	}
}
