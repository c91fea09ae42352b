package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"agentd/internal/errdefs"
)

// maxDepth bounds the nesting of request JSON.
const maxDepth = 64

// decodeJSON reads a size-limited body and decodes it strictly into v:
// unknown members, trailing data and excessive nesting are errors that name
// what is wrong. An empty body is an error too.
func decodeJSON(w http.ResponseWriter, r *http.Request, limit int64, v any) error {
	if ct := r.Header.Get("Content-Type"); ct != "" && !strings.HasPrefix(ct, "application/json") && !strings.HasPrefix(ct, "application/") {
		return errdefs.Validationf("Content-Type %q is not supported; send application/json", ct)
	}
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, limit))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return errdefs.Validation(fmt.Errorf("request body is larger than %d bytes: %w", limit, mbe))
		}
		return errdefs.Validationf("read request body: %v", err)
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return errdefs.Validationf("request body is empty; send a JSON object")
	}
	if d := depth(body); d > maxDepth {
		return errdefs.Validationf("request JSON nests %d levels deep; the limit is %d", d, maxDepth)
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return errdefs.Validation(describeJSONError(body, err))
	}
	if dec.More() {
		return errdefs.Validationf("request body has data after the JSON object")
	}
	return nil
}

// describeJSONError turns encoding/json errors into messages that name the
// field and the position.
func describeJSONError(body []byte, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		line, col := position(body, se.Offset)
		return fmt.Errorf("malformed JSON at line %d, column %d: %v", line, col, se)
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "(body)"
		}
		return &FieldError{Field: field, Err: fmt.Errorf("expected %s, got JSON %s", te.Type, te.Value)}
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
		return &FieldError{Field: name, Err: errors.New("unknown field")}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errors.New("malformed JSON: unexpected end of input")
	}
	return fmt.Errorf("malformed JSON: %v", err)
}

func position(b []byte, off int64) (line, col int) {
	line, col = 1, 1
	for i := int64(0); i < off && i < int64(len(b)); i++ {
		if b[i] == '\n' {
			line, col = line+1, 1
		} else {
			col++
		}
	}
	return line, col
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
