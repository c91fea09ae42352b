package runlog

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

// trickyStrings need escaping or are otherwise awkward for a JSON encoder.
var trickyStrings = []string{
	"", "plain", `"quoted" \back\slash/`, "<script>&amp;</script>", "line\nfeed\rcarriage\ttab\bback\fform",
	"\x00\x01\x1f\x7f", "sep\u2028par\u2029", "é日本語🙂", "bad\xffutf8\xc3", "\xe2\x80", "\xed\xa0\x80",
	"trailing\u2028", "\u2029", "\xe2\x80\xa8\xe2\x80\xa9<>&",
}

// checkString compares AppendString with json.Marshal.
func checkString(t *testing.T, s string) {
	t.Helper()
	want, _ := json.Marshal(s)
	if got := appendString([]byte("x"), s); !bytes.Equal(got[1:], want) || got[0] != 'x' {
		t.Fatalf("appendString(%q) = %s, want x%s", s, got, want)
	}
}

// TestAppendStringEveryPosition puts every byte value, and the
// multi-byte sequences that need care (U+2028, U+2029, invalid and
// truncated UTF-8, valid runes), at every position of plain strings.
func TestAppendStringEveryPosition(t *testing.T) {
	seqs := []string{"\u2028", "\u2029", "é", "日", "🙂", "\xe2\x80", "\xe2\x80\xa7", "\xed\xa0\x80", "\xc3", "\xff\xfe", "\x7f<"}
	for c := range 256 {
		seqs = append(seqs, string([]byte{byte(c)}))
	}
	for n := range 41 {
		plain := []byte(strings.Repeat("abcdefgh", 6)[:n])
		checkString(t, string(plain))
		for pos := range n {
			for _, seq := range seqs {
				s := string(plain[:pos]) + seq + string(plain[pos:])
				checkString(t, s)
				checkString(t, s[:n]) // cut, maybe inside seq
			}
		}
	}
	r := rand.New(rand.NewPCG(1, 2))
	for range 20000 {
		b := make([]byte, r.IntN(41))
		for i := range b {
			b[i] = byte(r.IntN(256))
			if r.IntN(4) > 0 {
				b[i] = 'a' + byte(i%26) // mostly plain, so runs span words
			}
		}
		checkString(t, string(b))
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		checkString(t, s)
		if len(s) > 0 {
			checkString(t, s[1:]) // another alignment
		}
	})
}

// benchStrings are strings of the shapes agentd encodes most: ids, short
// names, message text, longer prose and non-ASCII text.
var benchStrings = []struct{ name, s string }{
	{"id", "0198c3a2-7b1e-7c4d-9f00-1a2b3c4d5e6f"},
	{"name", "echo"},
	{"text", "hello world"},
	{"prose", "The quick brown fox jumps over the lazy dog. \"Quoted\", she said;\nthen <b>bold</b> & more text follows here, " +
		"long enough to span a few dozen machine words of plain ASCII."},
	{"unicode", "Grüße aus Köln — 日本語のテキスト 🙂 and some ASCII too"},
}

func BenchmarkAppendString(b *testing.B) {
	buf := make([]byte, 0, 512)
	for _, c := range benchStrings {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = appendString(buf[:0], c.s)
			}
		})
	}
}

// Plain may refuse strings encoding/json leaves as they are (beyond
// ASCII: the slow path is exact too) but never accepts one it escapes.
func TestPlain(t *testing.T) {
	for _, s := range append(trickyStrings, "a~z", " !#$%'()*+,-./09:;=?@AZ[]^_`az{|}") {
		q, _ := json.Marshal(s)
		asIs := string(q) == `"`+s+`"`
		if plain(s) && !asIs || asIs && isASCII(s) && !plain(s) {
			t.Errorf("plain(%q) = %v; encoding/json writes %s", s, plain(s), q)
		}
	}
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}
