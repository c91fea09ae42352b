package model

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"time"
	"unicode/utf8"
)

// The AppendJSON methods and functions of this file write exactly the bytes
// encoding/json's Marshal writes for the same value (HTML-safe escaping
// included), without reflection and, but for metadata maps, without
// allocating. Where Marshal would fail — a time RFC 3339 cannot carry,
// raw JSON that is not valid, metadata it cannot encode — they return an
// error and output that callers must discard; encoding/json then reports
// the failure its own way.

// errRawJSON is raw JSON (a data part, tool-call arguments) that is not
// valid JSON.
var errRawJSON = errors.New("model: raw JSON member is not valid JSON")

// AppendJSON appends the JSON encoding of m to dst.
func (m Message) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	if m.ID != "" {
		dst = append(dst, `"id":`...)
		dst = AppendJSONString(dst, m.ID)
		dst = append(dst, ',')
	}
	dst = append(dst, `"role":`...)
	dst = AppendJSONString(dst, string(m.Role))
	dst = append(dst, `,"parts":`...)
	dst, err := appendParts(dst, m.Parts)
	if err != nil {
		return dst, err
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, m.Name)
	}
	if len(m.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, m.Metadata); err != nil {
			return dst, err
		}
	}
	if !m.CreatedAt.IsZero() {
		dst = append(dst, `,"created_at":`...)
		if dst, err = AppendJSONTime(dst, m.CreatedAt); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the JSON encoding of a to dst.
func (a Artifact) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, a.ID)
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, a.Name)
	}
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = AppendJSONString(dst, a.Description)
	}
	dst = append(dst, `,"parts":`...)
	dst, err := appendParts(dst, a.Parts)
	if err != nil {
		return dst, err
	}
	if len(a.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, a.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendParts appends parts as a JSON array (null when nil).
func appendParts(dst []byte, parts []Part) ([]byte, error) {
	if parts == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = parts[i].AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendJSON appends the JSON encoding of p to dst.
func (p Part) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, string(p.Type))
	if p.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = AppendJSONString(dst, p.Text)
	}
	if len(p.Data) > 0 {
		dst = append(dst, `,"data":`...)
		if dst, err = appendRawJSON(dst, p.Data); err != nil {
			return dst, err
		}
	}
	if f := p.File; f != nil {
		dst = append(dst, `,"file":{`...)
		sep := ""
		if f.Name != "" {
			dst = append(dst, `"name":`...)
			dst = AppendJSONString(dst, f.Name)
			sep = ","
		}
		if len(f.Bytes) > 0 {
			dst = append(dst, sep+`"bytes":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, f.Bytes)
			dst = append(dst, '"')
			sep = ","
		}
		if f.URL != "" {
			dst = append(dst, sep+`"url":`...)
			dst = AppendJSONString(dst, f.URL)
		}
		dst = append(dst, '}')
	}
	if c := p.ToolCall; c != nil {
		dst = append(dst, `,"tool_call":{"id":`...)
		dst = AppendJSONString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, c.Name)
		if len(c.Arguments) > 0 {
			dst = append(dst, `,"arguments":`...)
			if dst, err = appendRawJSON(dst, c.Arguments); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	if r := p.ToolResult; r != nil {
		dst = append(dst, `,"tool_result":{"tool_call_id":`...)
		dst = AppendJSONString(dst, r.ToolCallID)
		if r.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = AppendJSONString(dst, r.Name)
		}
		dst = append(dst, `,"content":`...)
		dst = AppendJSONString(dst, r.Content)
		if r.IsError {
			dst = append(dst, `,"is_error":true`...)
		}
		dst = append(dst, '}')
	}
	if p.MediaType != "" {
		dst = append(dst, `,"media_type":`...)
		dst = AppendJSONString(dst, p.MediaType)
	}
	if len(p.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, p.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the JSON encoding of u to dst.
func (u TokenUsage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.InputTokens, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.OutputTokens, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	return append(dst, '}')
}

// appendMetadata appends a metadata map the way encoding/json does (keys
// sorted); it is the one member that goes through encoding/json.
func appendMetadata(dst []byte, m map[string]any) ([]byte, error) {
	b, err := json.Marshal(m)
	return append(dst, b...), err
}

// AppendJSONTime appends t as encoding/json writes a time.Time: an RFC 3339
// string with sub-second precision. Times RFC 3339 cannot carry (a year
// outside 0–9999, a zone offset of a day or more) are an error.
func AppendJSONTime(dst []byte, t time.Time) ([]byte, error) {
	dst = append(dst, '"')
	out, err := t.AppendText(dst)
	if err != nil {
		return dst, err
	}
	return append(out, '"'), nil
}

// AppendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: quotes, backslashes and control characters; <, > and & (as
// \u003c, \u003e, \u0026); U+2028 and U+2029; and each byte of invalid
// UTF-8 as \ufffd.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

const hexDigits = "0123456789abcdef"

// htmlSafe marks the ASCII bytes a JSON string carries as they are.
var htmlSafe = func() (safe [utf8.RuneSelf]bool) {
	for b := ' '; b < utf8.RuneSelf; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			safe[b] = true
		}
	}
	return safe
}()

// appendRawJSON appends raw JSON text compacted and HTML-escaped, as
// encoding/json writes a json.RawMessage; text that is not valid JSON is an
// error. In valid JSON, the characters to escape occur only in strings.
func appendRawJSON(dst, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return dst, errRawJSON
	}
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), nil
}

// FlatJSON reports whether every key and value of m comes back unchanged
// from an encoding/json round trip: keys and strings of valid UTF-8, finite
// numbers (float64), booleans and nulls, nothing nested. A shallow copy of
// such a map is a deep one, and storing it as JSON loses nothing.
func FlatJSON(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) {
			return false
		}
		switch v := v.(type) {
		case nil, bool:
		case string:
			if !utf8.ValidString(v) {
				return false
			}
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		default:
			return false
		}
	}
	return true
}
