package netguard

import (
	"net"
	"net/netip"
	"syscall"
	"time"

	"agentd/internal/errdefs"
)

// Private reports whether ip is loopback, private, link-local, multicast
// or unspecified: an address that names the host's own network.
func Private(ip netip.Addr) bool {
	ip = ip.Unmap()
	return ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified()
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
		return errdefs.Forbiddenf("address %s is private, loopback or link-local", ap.Addr().Unmap())
	}
	return nil
}

// Dialer returns a dialer with the rule applied and timeout as its
// connect timeout.
func Dialer(timeout time.Duration, allowPrivate bool) *net.Dialer {
	return &net.Dialer{Timeout: timeout, Control: Control(allowPrivate)}
}
