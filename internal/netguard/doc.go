// Package netguard holds the private-address rule that agentd applies to
// every outbound connection whose target a configuration or a user names
// (the http_get tool, federation peers): after DNS resolution, the address
// actually dialled must not be loopback, private, link-local, multicast or
// unspecified, unless the caller allows private targets explicitly.
//
// Checking the dialled address rather than the URL's host means neither a
// DNS answer nor a redirect can reach the internal network.
//
// netguard imports errdefs and the standard library only.
package netguard
