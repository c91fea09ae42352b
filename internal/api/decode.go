package api

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

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

// checkBodyType refuses a Content-Type that cannot carry the JSON body.
// It accepts JSON itself and the form type curl sends by default with -d,
// in UTF-8, the only encoding of JSON (RFC 8259).
func checkBodyType(ct string) error {
	if ct == "" || ct == "application/json" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || !(mt == "application/json" || mt == "application/x-www-form-urlencoded" || strings.HasSuffix(mt, "+json")) {
		return mediaTypeErr{fmt.Sprintf("Content-Type %q is not supported; send application/json", ct)}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return mediaTypeErr{fmt.Sprintf("charset %q of Content-Type %q is not supported; send UTF-8 JSON", cs, ct)}
	}
	return nil
}

// decodeJSON reads a size-limited body and decodes it strictly into v:
// unknown members, wrong types, trailing data and excessive nesting are
// errors that name the member at fault. An empty body is an error too. The
// body is read into a pooled buffer, so v must not keep the bytes it is
// decoded from (encoding/json copies what it stores). A v that is a
// rawChecker then checks the text too.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if err := checkBodyType(r.Header.Get("Content-Type")); err != nil {
		return err
	}
	buf := getBuffer()
	defer putBuffer(buf)
	body, err := readBody(w, r, limit, buf.b[:0])
	buf.b = body
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
	if c, ok := v.(rawChecker); ok {
		return c.checkRaw(body)
	}
	return nil
}

// rawChecker is a body with checks that need the JSON text it was decoded
// from, which decodeJSON releases on return.
type rawChecker interface{ checkRaw(raw []byte) error }

// readBody appends r's body to buf, failing as http.MaxBytesReader does
// (with a *http.MaxBytesError, and the connection closed after the answer)
// once the body is longer than limit. A body of known, modest length is
// read without growing buf more than once; larger ones grow buf as their
// bytes arrive, not as their Content-Length claims.
func readBody(w http.ResponseWriter, r *http.Request, limit int64, buf []byte) ([]byte, error) {
	if n := r.ContentLength; n > 0 && n <= limit && n < maxPooledBuffer {
		buf = slices.Grow(buf, int(n)+1) // +1: room for the read that sees EOF
	}
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Body.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if int64(len(buf)) > limit {
			// Let MaxBytesReader meet the excess, for its error and for
			// telling the server not to read the rest of the body.
			over := http.MaxBytesReader(w, io.NopCloser(io.MultiReader(bytes.NewReader(buf), r.Body)), limit)
			_, err := io.Copy(io.Discard, over)
			return buf, err
		}
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
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
