package runlog

import "encoding/json"

// appendString appends s as a JSON string, exactly as encoding/json writes
// it (HTML-safe escaping included): plain strings, most of them, as they
// are, the rest through encoding/json. It is the one hand-written JSON
// encoder in agentd (docs/architecture.md): event frames and token bodies
// are written with it, and jsonstring_test.go fuzzes it against
// encoding/json.
func appendString(b []byte, s string) []byte {
	if !plain(s) {
		q, _ := json.Marshal(s) // a string always encodes
		return append(b, q...)
	}
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// plain reports whether s is written as it is inside a JSON string by
// encoding/json: printable ASCII other than '"', '\\', '<', '>' and '&'.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			return false
		}
	}
	return true
}
