package auth

import (
	"net/http"
	"strings"
)

// agentProtoPrefix is where cmd/server mounts the Agent Protocol face.
const agentProtoPrefix = "/lg/"

// agentProtoScope is the scope a route of the Agent Protocol face needs:
// assistants are agents (read-only); reading threads, runs, state and
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
		return AgentsRead
	case !write:
		return RunsRead
	case method == http.MethodPost && (strings.HasSuffix(rest, "/search") || strings.HasSuffix(rest, "/count") ||
		strings.HasSuffix(rest, "/history") || strings.HasSuffix(rest, "/state/checkpoint") ||
		rest == "/store/namespaces"):
		return RunsRead
	}
	return RunsWrite
}
