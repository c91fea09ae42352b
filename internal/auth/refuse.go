package auth

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"
)

// Refusal is an answer given at the server's edge, before any face sees
// the request (not authenticated, not permitted, over a limit). Write
// renders it in the format of the route it refuses: problem details for
// the REST API, a JSON-RPC error for A2A JSON-RPC, a google.rpc.Status
// error for A2A HTTP+JSON.
type Refusal struct {
	Status int
	// Class is the problem type's last word ("unauthorized",
	// "forbidden", "rate_limit", …), matching the REST API's classes.
	Class  string
	Title  string
	Detail string
	// Challenge is the WWW-Authenticate header of a 401 or 403.
	Challenge string
	// RetryAfter is the Retry-After header (seconds) of a 429 or 503.
	RetryAfter string
}

// Write answers the refusal on w.
func (f Refusal) Write(w http.ResponseWriter, r *http.Request) {
	if f.Challenge != "" {
		w.Header().Set("WWW-Authenticate", f.Challenge)
	}
	if f.RetryAfter != "" {
		w.Header().Set("Retry-After", f.RetryAfter)
	}
	var body any
	switch RouteFamily(r.URL.Path) {
	case FamilyJSONRPC:
		w.Header().Set("Content-Type", "application/json")
		body = map[string]any{"jsonrpc": "2.0", "id": nil, "error": map[string]any{
			"code": f.jsonrpcCode(), "message": f.Detail, "data": f.details(),
		}}
	case FamilyA2AREST:
		w.Header().Set("Content-Type", "application/json")
		body = map[string]any{"error": map[string]any{
			"code": f.Status, "status": f.grpcStatus(), "message": f.Detail, "details": f.details(),
		}}
	default:
		w.Header().Set("Content-Type", "application/problem+json")
		body = map[string]any{
			"type": "urn:agentd:problem:" + f.Class, "title": f.Title, "status": f.Status,
			"detail": f.Detail, "instance": r.URL.Path,
		}
	}
	w.WriteHeader(f.Status)
	_ = json.NewEncoder(w).Encode(body)
}

// jsonrpcCode is the A2A JSON-RPC code of the refusal: the codes a2a-go's
// client maps to ErrUnauthenticated and ErrUnauthorized, and -32000
// (server error) for limits, which A2A has no code of its own for.
func (f Refusal) jsonrpcCode() int {
	switch f.Status {
	case http.StatusUnauthorized:
		return -31401
	case http.StatusForbidden:
		return -31403
	case http.StatusRequestEntityTooLarge, http.StatusBadRequest:
		return -32600
	}
	return -32000
}

func (f Refusal) grpcStatus() string {
	switch f.Status {
	case http.StatusUnauthorized:
		return "UNAUTHENTICATED"
	case http.StatusForbidden:
		return "PERMISSION_DENIED"
	case http.StatusTooManyRequests:
		return "RESOURCE_EXHAUSTED"
	case http.StatusServiceUnavailable:
		return "UNAVAILABLE"
	}
	return "INVALID_ARGUMENT"
}

func (f Refusal) details() []*errordetails.Typed {
	var reason string
	switch f.Status {
	case http.StatusUnauthorized:
		reason = a2a.ErrorReason(a2a.ErrUnauthenticated)
	case http.StatusForbidden:
		reason = a2a.ErrorReason(a2a.ErrUnauthorized)
	default:
		reason = f.grpcStatus()
	}
	return []*errordetails.Typed{errordetails.NewErrorInfo(reason, a2a.ProtocolDomain, nil)}
}

// Family is the kind of route a path belongs to, which decides the format
// of errors answered for it.
type Family int

// The route families.
const (
	FamilyREST    Family = iota // the REST API and everything else
	FamilyJSONRPC               // /agents/{id}/jsonrpc
	FamilyA2AREST               // /agents/{id}/rest/…
)

// RouteFamily returns the family of path.
func RouteFamily(path string) Family {
	rest, ok := strings.CutPrefix(path, "/agents/")
	if !ok {
		return FamilyREST
	}
	_, sub, _ := strings.Cut(rest, "/")
	switch {
	case sub == "jsonrpc":
		return FamilyJSONRPC
	case sub == "rest" || strings.HasPrefix(sub, "rest/"):
		return FamilyA2AREST
	}
	return FamilyREST
}
