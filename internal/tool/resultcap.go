package tool

import (
	"fmt"
	"unicode/utf8"
)

// DefaultMaxResultBytes caps the text of a tool's result when
// Registry.MaxResultBytes is zero: one result must not fill a model's
// context window on its own.
const DefaultMaxResultBytes = 100_000

// capResult cuts r's text to at most limit bytes (at a character
// boundary) and says so at its end, so that the model knows it reads part
// of the result. Results within the limit are returned as they are.
func capResult(r Result, limit int) Result {
	if limit <= 0 {
		limit = DefaultMaxResultBytes
	}
	if len(r.Content) <= limit {
		return r
	}
	cut := limit
	for cut > 0 && !utf8.RuneStart(r.Content[cut]) {
		cut--
	}
	r.Content = r.Content[:cut] + fmt.Sprintf("\n[result truncated: %d of %d bytes shown (max_result_bytes)]", cut, len(r.Content))
	return r
}
