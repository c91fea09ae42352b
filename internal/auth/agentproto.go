package auth

import (
	"net/http"
	"strings"
)

// agentProtoPrefix is where cmd/server mounts the Agent Protocol face.
const agentProtoPrefix = "/lg/"

// agentProtoScope is the scope a route of the Agent Protocol face needs:
// assistants as assistantScope says; reading threads, runs, state and
// history — also the POSTed searches, counts and history queries, and the
// store's items and namespaces — is runs:read; creating, changing,
// cancelling and deleting (store items too) is runs:write.
func agentProtoScope(method, path string) Scope {
	rest := strings.TrimPrefix(path, "/lg")
	write := method != http.MethodGet && method != http.MethodHead
	switch {
	case rest == "/info":
		return ""
	case strings.HasPrefix(rest, "/assistants"):
		return assistantScope(method, rest)
	case !write:
		return RunsRead
	case method == http.MethodPost && (strings.HasSuffix(rest, "/search") || strings.HasSuffix(rest, "/count") ||
		strings.HasSuffix(rest, "/history") || strings.HasSuffix(rest, "/state/checkpoint") ||
		rest == "/store/namespaces"):
		return RunsRead
	}
	return RunsWrite
}

// assistantScope is the scope an assistants route needs (path without its
// face's prefix): reading them, also the POSTed search, count and version
// listing, is agents:read; writing them is runs:write, as an assistant
// configures its tenant's runs and nothing else.
func assistantScope(method, path string) Scope {
	write := method != http.MethodGet && method != http.MethodHead
	if !write || strings.HasSuffix(path, "/search") || strings.HasSuffix(path, "/count") || strings.HasSuffix(path, "/versions") {
		return AgentsRead
	}
	return RunsWrite
}
