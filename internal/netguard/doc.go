// Package netguard holds the private-address rule that agentd applies to
// every outbound connection whose target a configuration or a user names
// (the http_get tool, federation peers): after DNS resolution, the address
// actually dialled must be a public unicast address — not loopback,
// private, link-local, multicast, unspecified, shared (100.64.0.0/10) or
// another special-purpose range, nor an IPv6 form (IPv4-mapped, NAT64,
// 6to4) of such an address — unless the caller allows private targets
// explicitly.
//
// Checking the dialled address rather than the URL's host means neither a
// DNS answer nor a redirect can reach the internal network.
//
// Imports: errdefs.
package netguard
