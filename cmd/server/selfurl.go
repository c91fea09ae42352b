package main

import (
	"net"
	"strings"
	"sync/atomic"
)

// selfURL is the server's own base URL, for remote agents whose peer is a
// path on this server (the demo's relay). It is empty until the server
// listens; the configured public URL wins over the listen address.
type selfURL struct{ v atomic.Pointer[string] }

func (s *selfURL) get() string {
	if p := s.v.Load(); p != nil {
		return *p
	}
	return ""
}

// set records publicURL, else http:// and the listen address, with an
// unspecified host (0.0.0.0, ::) replaced by loopback, which can be dialled.
func (s *selfURL) set(publicURL string, addr net.Addr) {
	u := strings.TrimSuffix(publicURL, "/")
	if u == "" {
		host, port, err := net.SplitHostPort(addr.String())
		if err != nil {
			return
		}
		if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
			host = "127.0.0.1"
		}
		u = "http://" + net.JoinHostPort(host, port)
	}
	s.v.Store(&u)
}
