package store

import (
	"math"
	"unicode/utf8"
)

// Flat reports whether every key and value of m comes back unchanged
// from an encoding/json round trip — a store's: keys and strings of valid
// UTF-8, finite numbers (float64), booleans and nulls, nothing nested. A
// shallow copy of such a map is a deep one, and storing it as JSON loses
// nothing.
func Flat(m map[string]any) bool {
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
