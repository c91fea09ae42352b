package api

import (
	"errors"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
)

// The request parameters every route reads: path members, cursors, limits
// and flags, each refused with a Validation error naming it.

// cursorParam reads the resume point and where it came from: ?after= wins
// over Last-Event-ID.
func cursorParam(r *http.Request) (int64, string, error) {
	name, v := "after", r.URL.Query().Get("after")
	if v == "" {
		name, v = "Last-Event-ID", r.Header.Get("Last-Event-ID")
	}
	if v == "" {
		return 0, name, nil
	}
	n, err := seqParam(name, strings.TrimSpace(v), "event seq")
	return n, name, err
}

// seqParam parses v, the parameter name, as a non-negative int64 (an
// event seq or a transcript position, as what says).
func seqParam(name, v, what string) (int64, error) {
	n, err := strconv.ParseInt(v, 10, 64)
	if errors.Is(err, strconv.ErrRange) && !strings.HasPrefix(v, "-") {
		return 0, fieldErr(name, errdefs.Validationf("%q is out of range: the largest %s is %d", v, what, int64(math.MaxInt64)))
	}
	if err != nil || n < 0 {
		return 0, fieldErr(name, errdefs.Validationf("must be a non-negative %s, got %q", what, v))
	}
	return n, nil
}

// pathParam returns the path parameter name, unescaped. chi matches the
// path as the client escaped it (URL.RawPath) when that differs from the
// default escaping, and then hands out its segments escaped; otherwise
// they come from the already unescaped URL.Path.
func pathParam(r *http.Request, name string) (string, error) {
	v := chi.URLParam(r, name)
	if r.URL.RawPath == "" {
		return v, nil
	}
	u, err := url.PathUnescape(v)
	if err != nil {
		return "", fieldErr(name, errdefs.Validationf("%q is not a valid escaped path segment", v))
	}
	return u, nil
}

// limitParam reads ?limit= (1 to max); 0 when absent lets the store pick
// its default.
func limitParam(r *http.Request, max int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, fieldErr("limit", errdefs.Validationf("must be an integer from 1 to %d, got %q", max, v))
	}
	return n, nil
}

func boolParam(q url.Values, name string, def bool) (bool, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fieldErr(name, errdefs.Validationf("must be true or false, got %q", v))
	}
	return b, nil
}
