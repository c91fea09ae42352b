package model

import (
	"encoding/json"
	"math"
	"unicode/utf8"
)

// AppendJSONString appends s as a JSON string, exactly as encoding/json
// writes it (HTML-safe escaping included). It serves the engines' hand-built
// step and token payloads, the hot path of every run; it appends plain
// strings — most of them — as they are and leaves the rest to encoding/json.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always encodes
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
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
