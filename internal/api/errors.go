package api

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
)

// NotFoundHandler answers unknown paths with a problem document.
func NotFoundHandler(w http.ResponseWriter, r *http.Request) { writeError(w, r, notFoundRoute(r)) }

// MethodNotAllowedHandler answers a known path with a wrong method: a
// problem document and the Allow header RFC 9110 requires, listing the
// methods the router serves on the path. Install it on the chi router
// that routes the request (Mux.MethodNotAllowed); it asks that router.
func MethodNotAllowedHandler(w http.ResponseWriter, r *http.Request) {
	if rctx := chi.RouteContext(r.Context()); rctx != nil && rctx.Routes != nil {
		allowed := allowedMethods(rctx.Routes, r)
		if len(allowed) == 0 {
			// chi sends methods it does not know here whatever the path.
			writeError(w, r, notFoundRoute(r))
			return
		}
		w.Header()["Allow"] = []string{strings.Join(allowed, ", ")}
	}
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

// routerMethods are the methods chi routes, in the order Allow lists them.
var routerMethods = []string{
	http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch,
	http.MethodDelete, http.MethodOptions, http.MethodConnect, http.MethodTrace, "QUERY",
}

// allowedMethods asks the router that routed r which methods it serves on
// r's path. chi records them while routing but keeps them to itself, so
// the path is matched again, once per method; this runs only on 405s.
func allowedMethods(routes chi.Routes, r *http.Request) []string {
	// The path as chi routes it: the escaped form when there is one.
	path := r.URL.RawPath
	if path == "" {
		path = r.URL.Path
	}
	var allowed []string
	for _, m := range routerMethods {
		if routes.Match(chi.NewRouteContext(), m, path) {
			allowed = append(allowed, m)
		}
	}
	return allowed
}
