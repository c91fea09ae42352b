package limits

import (
	"net/http"
	"strconv"
	"strings"

	"agentd/internal/auth"
)

// kind says what a request asks for beyond a plain answer.
type kind struct {
	run    bool // it may start or resume a run
	stream bool // it answers with an event stream
}

// classifyURL reads the kind of a request from its method and path (and,
// for REST sends, ?stream=). A2A JSON-RPC calls are classified by their
// method (classifyMethod) once the body is read.
func classifyURL(r *http.Request) kind {
	p := r.URL.Path
	switch auth.RouteFamily(p) {
	case auth.FamilyA2AREST:
		switch {
		case strings.HasSuffix(p, "/message:send"):
			return kind{run: true}
		case strings.HasSuffix(p, "/message:stream"):
			return kind{run: true, stream: true}
		case strings.HasSuffix(p, ":subscribe"):
			return kind{stream: true}
		}
		return kind{}
	case auth.FamilyJSONRPC:
		return kind{}
	}
	if strings.HasPrefix(p, agentProtoPrefix) {
		return classifyAgentProto(r.Method, p)
	}
	switch {
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/v1/agents/") && strings.HasSuffix(p, "/messages"):
		// As the API reads it (strconv.ParseBool); a value it refuses
		// starts nothing.
		stream, _ := strconv.ParseBool(r.URL.Query().Get("stream"))
		return kind{run: true, stream: stream}
	case r.Method == http.MethodPost && strings.HasPrefix(p, "/v1/runs/") && strings.HasSuffix(p, "/input"):
		return kind{run: true}
	case r.Method == http.MethodGet && strings.HasPrefix(p, "/v1/runs/") && strings.HasSuffix(p, "/events"):
		return kind{stream: true}
	}
	return kind{}
}

// classifyMethod is the kind of an A2A JSON-RPC method, v1.0 or v0.3.
func classifyMethod(m string) kind {
	switch m {
	case "SendMessage", "message/send":
		return kind{run: true}
	case "SendStreamingMessage", "message/stream":
		return kind{run: true, stream: true}
	case "SubscribeToTask", "tasks/resubscribe":
		return kind{stream: true}
	}
	return kind{}
}
