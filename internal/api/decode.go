package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"

	"agentd/internal/errdefs"
	"agentd/internal/strictjson"
)

// maxDepth bounds the nesting of request JSON.
const maxDepth = 64

// mediaTypeErr is a request body in a format the API does not read (415).
type mediaTypeErr struct{ msg string }

func (e mediaTypeErr) Error() string { return e.msg }

// ErrorClass makes an unsupported media type a validation error.
func (e mediaTypeErr) ErrorClass() errdefs.Class { return errdefs.ClassValidation }

// acceptedBody reports whether a Content-Type may carry the JSON body:
// JSON itself, and the form type curl sends by default with -d.
func acceptedBody(ct string) bool {
	if ct == "" {
		return true
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case "application/json", "application/x-www-form-urlencoded":
		return true
	}
	return len(mt) > 5 && mt[len(mt)-5:] == "+json"
}

// decodeJSON reads a size-limited body and decodes it strictly into v:
// unknown members, wrong types, trailing data and excessive nesting are
// errors that name the member at fault. An empty body is an error too.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); !acceptedBody(ct) {
		return mediaTypeErr{fmt.Sprintf("Content-Type %q is not supported; send application/json", ct)}
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errdefs.Validation(fmt.Errorf("request body is larger than %d bytes: %w", limit, mbe))
		}
		return errdefs.Validationf("read request body: %v", err)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 {
		return errdefs.Validationf("request body is empty; send a JSON object")
	}
	if d := depth(body); d > maxDepth {
		return errdefs.Validationf("request JSON nests %d levels deep; the limit is %d", d, maxDepth)
	}
	if trimmed[0] != '{' && (trimmed[0] == '[' || trimmed[0] == '"' || (trimmed[0] >= '0' && trimmed[0] <= '9') || trimmed[0] == '-' || bytes.HasPrefix(trimmed, []byte("true")) || bytes.HasPrefix(trimmed, []byte("false")) || bytes.HasPrefix(trimmed, []byte("null"))) {
		return errdefs.Validationf("request body must be a JSON object")
	}
	if err := strictjson.Decode(body, v); err != nil {
		var pe *strictjson.PathError
		if errors.As(err, &pe) && pe.Path != "" {
			return fieldErr(pe.Path, errors.New(pe.Msg))
		}
		return errdefs.Validation(err)
	}
	return nil
}

// depth returns the deepest nesting of objects and arrays in JSON text.
func depth(b []byte) int {
	d, max, inStr, esc := 0, 0, false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == '{' || c == '[':
			d++
			if d > max {
				max = d
			}
		case c == '}' || c == ']':
			d--
		}
	}
	return max
}
