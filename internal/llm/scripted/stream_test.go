package scripted

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// asciiSpace agrees with unicode.IsSpace on ASCII, and skip with a
// rune-by-rune scan on any text.
func TestSkipMatchesUnicodeIsSpace(t *testing.T) {
	for c := range rune(utf8.RuneSelf) {
		if asciiSpace[c] != unicode.IsSpace(c) {
			t.Errorf("asciiSpace[%q] = %v", c, asciiSpace[c])
		}
	}
	for _, s := range []string{"", "a", " a  b\t\nc ", "\u00a0x\u2003y\u0085", "é✓ 🎉\v\f", "bad \xff x"} {
		for i := range len(s) + 1 {
			for _, space := range []bool{true, false} {
				want := i
				for want < len(s) {
					r, size := utf8.DecodeRuneInString(s[want:])
					if unicode.IsSpace(r) != space {
						break
					}
					want += size
				}
				if got := skip(s, i, space); got != want {
					t.Errorf("skip(%q, %d, %v) = %d, want %d", s, i, space, got, want)
				}
			}
		}
	}
}
