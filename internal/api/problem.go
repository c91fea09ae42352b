package api

import (
	"encoding/json"
	"errors"
	"net/http"

	"agentd/internal/errdefs"
	"agentd/internal/logctx"
	"agentd/internal/runtime"
)

// Problem is an RFC 9457 problem details object.
type Problem struct {
	Type     string `json:"type"`
	Title    string `json:"title"`
	Status   int    `json:"status"`
	Detail   string `json:"detail,omitempty"`
	Instance string `json:"instance,omitempty"`
	// Field names the request member at fault (a JSON pointer-ish path such
	// as "message.parts[0].text"), when one is.
	Field string `json:"field,omitempty"`
}

// fieldErr says err is about the request member field; an error of no
// class is a validation error.
func fieldErr(field string, err error) error {
	if errdefs.ClassOf(err) == errdefs.ClassInternal {
		err = errdefs.New(errdefs.ClassValidation, err)
	}
	return errdefs.WithField(field, err)
}

// problemTitles gives each class a stable, human title.
var problemTitles = map[errdefs.Class]string{
	errdefs.ClassValidation:     "Invalid request",
	errdefs.ClassNotFound:       "Not found",
	errdefs.ClassConflict:       "Conflict",
	errdefs.ClassNotAvailable:   "Not available",
	errdefs.ClassUnauthorized:   "Unauthorized",
	errdefs.ClassForbidden:      "Forbidden",
	errdefs.ClassInterrupted:    "Interrupted",
	errdefs.ClassAborted:        "Aborted",
	errdefs.ClassBudgetExceeded: "Budget exceeded",
	errdefs.ClassRateLimit:      "Too many requests",
	errdefs.ClassTimeout:        "Timeout",
	errdefs.ClassModelOutput:    "Unusable model answer",
	errdefs.ClassContentFilter:  "Answer withheld by the content filter",
	errdefs.ClassInternal:       "Internal error",
}

// writeError answers err as problem details; the status comes from the
// error's class (errdefs.HTTPStatus), the one place that mapping lives.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	class := errdefs.ClassOf(err)
	status := errdefs.HTTPStatus(err)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		status, class = http.StatusRequestEntityTooLarge, errdefs.ClassValidation
	}
	var me methodErr
	if errors.As(err, &me) {
		status = http.StatusMethodNotAllowed
	}
	var mt mediaTypeErr
	if errors.As(err, &mt) || errors.Is(err, runtime.ErrUnsupportedContent) {
		status = http.StatusUnsupportedMediaType
	}
	p := Problem{
		Type:     "urn:agentd:problem:" + string(class),
		Title:    problemTitles[class],
		Status:   status,
		Detail:   err.Error(),
		Instance: r.URL.Path,
	}
	switch status {
	case http.StatusRequestEntityTooLarge:
		p.Type, p.Title = "urn:agentd:problem:payload_too_large", "Request body too large"
	case http.StatusUnsupportedMediaType:
		// Own types: "validation" is the 400 of a request the client
		// can fix by changing its content, not its method or format.
		p.Type, p.Title = "urn:agentd:problem:unsupported_media_type", "Unsupported media type"
	case http.StatusMethodNotAllowed:
		p.Type, p.Title = "urn:agentd:problem:method_not_allowed", "Method not allowed"
	}
	if !errdefs.IsPublic(err) {
		// The cause may name hosts, users or drivers: it goes to the
		// log, the client gets what it can act on.
		logctx.From(r.Context()).WarnContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "class", class, "err", err)
		p.Detail = errdefs.ClientText(err)
		if class == errdefs.ClassNotAvailable {
			w.Header().Set("Retry-After", errdefs.RetryAfterSeconds)
		}
	}
	p.Field = errdefs.FieldOf(err)
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
