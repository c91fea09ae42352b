package limits

import (
	"net/http"
	"strings"
)

// agentProtoPrefix is where cmd/server mounts the Agent Protocol face.
const agentProtoPrefix = "/lg/"

// classifyAgentProto reads the kind of an Agent Protocol request: a POST
// to …/runs, …/runs/wait, /runs/batch or …/runs/stream starts (or resumes)
// runs, the
// last one streaming; a GET of …/stream (a run's join stream) streams.
func classifyAgentProto(method, path string) kind {
	rest := strings.TrimPrefix(path, "/lg")
	switch {
	case method == http.MethodPost && strings.HasSuffix(rest, "/runs/stream"):
		return kind{run: true, stream: true}
	case method == http.MethodPost && (strings.HasSuffix(rest, "/runs") || strings.HasSuffix(rest, "/runs/wait") || rest == "/runs/batch"):
		return kind{run: true}
	case method == http.MethodGet && strings.HasSuffix(rest, "/stream"):
		return kind{stream: true}
	}
	return kind{}
}
