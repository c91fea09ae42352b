package agentproto

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"

	"agentd/internal/errdefs"
	"agentd/internal/logctx"
)

// writeJSON answers v as JSON with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeDetail(w, http.StatusInternalServerError, "the answer could not be encoded")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeDetail answers an error in the LangGraph API's shape:
// {"detail": "…"}.
func writeDetail(w http.ResponseWriter, status int, detail string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := json.Marshal(map[string]string{"detail": detail})
	_, _ = w.Write(b)
}

// writeError maps err to the status the LangGraph API answers with: bad
// input is 422, an unknown resource 404, a busy thread 409; the rest as
// the REST face maps it. A message that may name internals is replaced.
func writeError(w http.ResponseWriter, r *http.Request, err error) {
	status := statusOf(err)
	detail := err.Error()
	if !errdefs.IsPublic(err) {
		// The cause may name hosts or drivers: it goes to the log.
		logctx.From(r.Context()).WarnContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "class", errdefs.ClassOf(err), "err", err)
		detail = http.StatusText(status)
		if errdefs.IsNotAvailable(err) {
			detail = errdefs.UnavailableDetail
			w.Header().Set("Retry-After", errdefs.RetryAfterSeconds)
		}
	}
	writeDetail(w, status, detail)
}

func statusOf(err error) int {
	var big tooLarge
	if errors.As(err, &big) {
		return http.StatusRequestEntityTooLarge
	}
	if errdefs.IsValidation(err) {
		return http.StatusUnprocessableEntity
	}
	return errdefs.HTTPStatus(err)
}

// badInput is a 422 naming the field.
func badInput(field, format string, args ...any) error {
	return errdefs.WithField(field, errdefs.Validationf(format, args...))
}

// decodeBody reads the JSON request body into v. An empty body leaves v
// as it is; fields v does not know are ignored, as LangGraph servers
// ignore the options of newer clients.
func (s *Server) decodeBody(w http.ResponseWriter, r *http.Request, v any) error {
	body := http.MaxBytesReader(w, r.Body, s.opts.MaxBodyBytes)
	dec := json.NewDecoder(body)
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		var tooBig *http.MaxBytesError
		switch {
		case errors.Is(err, io.EOF):
			return nil
		case errors.As(err, &tooBig):
			return errdefs.Public(tooLarge{limit: s.opts.MaxBodyBytes})
		}
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) && typeErr.Field != "" {
			return badInput(typeErr.Field, "a JSON %s does not fit here", typeErr.Value)
		}
		var syntaxErr *json.SyntaxError
		if errors.As(err, &syntaxErr) {
			return errdefs.Validationf("request body: not valid JSON at byte %d", syntaxErr.Offset)
		}
		return errdefs.Validationf("request body: not a JSON object")
	}
	if dec.More() {
		return errdefs.Validationf("request body: more than one JSON value")
	}
	return nil
}

// tooLarge is a request body over the limit (413).
type tooLarge struct{ limit int64 }

func (e tooLarge) Error() string {
	return "request body: larger than " + strconv.FormatInt(e.limit, 10) + " bytes"
}
