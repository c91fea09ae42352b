package api

import (
	"net/http"

	"agentd/internal/errdefs"
)

// NotFoundHandler answers unknown paths with a problem document.
func NotFoundHandler(w http.ResponseWriter, r *http.Request) { writeError(w, r, notFoundRoute(r)) }

// MethodNotAllowedHandler answers a known path with a wrong method.
func MethodNotAllowedHandler(w http.ResponseWriter, r *http.Request) {
	writeError(w, r, methodNotAllowed(r))
}

func notFoundRoute(r *http.Request) error {
	return errdefs.NotFoundf("no route for %s %s; see /openapi.yaml", r.Method, r.URL.Path)
}

type methodErr struct{ msg string }

func (e methodErr) Error() string { return e.msg }

func methodNotAllowed(r *http.Request) error {
	return errdefs.Validation(methodErr{"method " + r.Method + " is not allowed on " + r.URL.Path})
}
