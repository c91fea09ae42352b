package netguard

import (
	"net"
	"net/netip"
	"syscall"
	"time"

	"agentd/internal/errdefs"
)

// Private reports whether ip is not a public unicast address: loopback,
// private (RFC 1918, RFC 4193), link-local (cloud metadata at
// 169.254.169.254), multicast, unspecified, or one of the special ranges
// in nonPublic (shared address space with cloud metadata at
// 100.100.100.200, IETF protocol assignments, "this network",
// benchmarking, reserved). An IPv6 address that carries an IPv4 one —
// IPv4-mapped, NAT64 (64:ff9b::/96) or 6to4 (2002::/16) — is judged by
// the IPv4 address it reaches.
func Private(ip netip.Addr) bool {
	ip = embedded(ip.Unmap())
	if ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return true
	}
	for _, p := range nonPublic {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// nonPublic are the special-purpose ranges the netip predicates do not
// cover.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),      // "this network" (Linux dials 0.x as the local host)
	netip.MustParsePrefix("100.64.0.0/10"),  // shared address space (carrier NAT; Alibaba's metadata at 100.100.100.200)
	netip.MustParsePrefix("192.0.0.0/24"),   // IETF protocol assignments
	netip.MustParsePrefix("198.18.0.0/15"),  // benchmarking
	netip.MustParsePrefix("240.0.0.0/4"),    // reserved, and the broadcast address
	netip.MustParsePrefix("64:ff9b:1::/48"), // local-use NAT64 (RFC 8215): the site's own translator
	netip.MustParsePrefix("::/96"),          // IPv4-compatible (deprecated): no public use
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// embedded returns the IPv4 address an IPv6 NAT64 or 6to4 address
// reaches, else ip.
func embedded(ip netip.Addr) netip.Addr {
	b := ip.As16()
	switch {
	case nat64.Contains(ip):
		return netip.AddrFrom4([4]byte(b[12:16]))
	case sixToFour.Contains(ip):
		return netip.AddrFrom4([4]byte(b[2:6]))
	}
	return ip
}

// Control returns a net.Dialer Control function that refuses private
// addresses with an errdefs Forbidden error, or nil (no check) when
// allowPrivate is set.
func Control(allowPrivate bool) func(network, address string, c syscall.RawConn) error {
	if allowPrivate {
		return nil
	}
	return CheckAddress
}

// CheckAddress is the Control check itself: address is the "ip:port" the
// dialer is about to connect to.
func CheckAddress(_, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return errdefs.Forbiddenf("address %q: %v", address, err)
	}
	if Private(ap.Addr()) {
		return errdefs.Forbiddenf("address %s is not public (private, loopback, link-local, shared or reserved)", ap.Addr().Unmap())
	}
	return nil
}

// Dialer returns a dialer with the rule applied and timeout as its
// connect timeout.
func Dialer(timeout time.Duration, allowPrivate bool) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: Control(allowPrivate)}
}
