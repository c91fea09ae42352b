package a2a

import (
	"fmt"
	"mime"
	"strings"
	"unicode/utf8"
)

// maxNesting bounds how deep a request's JSON may nest: no A2A request
// needs more, and the SDK decoders would otherwise recurse as deep as a
// client likes.
const maxNesting = 64

// bodyProblem is what is wrong with a request body before any decoder
// sees it; unsupported says the fault is the media type (415), not the
// content (a parse error).
type bodyProblem struct {
	msg         string
	unsupported bool
}

// checkBody refuses what the SDK transports would take silently or explain
// with their own type names: a Content-Type that is not JSON, a body that
// is not UTF-8 (they would replace it with U+FFFD), and nesting deeper than
// maxNesting. An empty body (GET routes) passes.
func checkBody(contentType string, body []byte) *bodyProblem {
	if len(body) == 0 {
		return nil
	}
	if p := checkMediaType(contentType); p != nil {
		return p
	}
	if !utf8.Valid(body) {
		return &bodyProblem{msg: fmt.Sprintf("request body is not valid UTF-8 (first bad byte at offset %d)", badUTF8(body))}
	}
	if depth := nesting(body); depth > maxNesting {
		return &bodyProblem{msg: fmt.Sprintf("request body nests JSON %d levels deep; at most %d are allowed", depth, maxNesting)}
	}
	return nil
}

// checkMediaType accepts JSON media types (application/json,
// application/a2a+json, any +json) in UTF-8, and a missing header.
func checkMediaType(ct string) *bodyProblem {
	if ct == "" {
		return nil
	}
	mt, params, err := mime.ParseMediaType(ct)
	if err != nil || mt != "application/json" && !strings.HasSuffix(mt, "+json") {
		return &bodyProblem{unsupported: true, msg: fmt.Sprintf("Content-Type %q is not supported; send application/json or application/a2a+json", ct)}
	}
	if cs, ok := params["charset"]; ok && !strings.EqualFold(cs, "utf-8") {
		return &bodyProblem{unsupported: true, msg: fmt.Sprintf("charset %q is not supported; send UTF-8 JSON", cs)}
	}
	return nil
}

func badUTF8(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// nesting is the deepest nesting of arrays and objects in b, counted
// outside strings; it stops counting once past maxNesting.
func nesting(b []byte) int {
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, c := range b {
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
		case c == '"':
			inString = true
		case c == '[' || c == '{':
			if depth++; depth > deepest {
				if deepest = depth; deepest > maxNesting {
					return deepest
				}
			}
		case c == ']' || c == '}':
			depth--
		}
	}
	return deepest
}
