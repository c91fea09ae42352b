package agui

import (
	"encoding/json"
	"net/http"

	"agentd/internal/errdefs"
	"agentd/internal/logctx"
)

// problem is an RFC 9457 problem details object, as the REST API answers.
type problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	Field    string `json:"field,omitempty"`
}

// writeError answers err as problem details, before any stream started;
// the status comes from the error's class (errdefs.HTTPStatus). A cause
// that is not public goes to the log only.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	class := errdefs.ClassOf(err)
	status := errdefs.HTTPStatus(err)
	p := problem{
		Type:     "urn:agentd:problem:" + string(class),
		Title:    http.StatusText(status),
		Status:   status,
		Detail:   errdefs.ClientText(err),
		Instance: r.URL.Path,
		Field:    errdefs.FieldOf(err),
	}
	if !errdefs.IsPublic(err) {
		logctx.From(r.Context()).WarnContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "class", class, "err", err)
	}
	if class == errdefs.ClassNotAvailable {
		w.Header().Set("Retry-After", errdefs.RetryAfterSeconds)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}
