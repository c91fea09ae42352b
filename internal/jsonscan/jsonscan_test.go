package jsonscan

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

var samples = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{"b":null}] } `,
	`{"run_id":"r","seq":1,"type":"delta","time":"2026-01-01T00:00:00Z","actor":"echo","text":"h\u00e9\"\\\/\b\f\n\r\t"}`,
	`{"run_id":"01a202e1-5e64-7002-8f10-9e9b290196fa","seq":4,"type":"step.start","time":"2026-11-22T10:49:20.123456Z","actor":"echo","payload":{"kind":"model","text":"h\u00e9llo \"wörld\" \\ ≠ 𝄞 <&>","detail":{"iteration":1}}}`,
	"\"\xff\xfe\"", "\"0123456\x1f\"", "\"01234567\x7f\x80\"", "\"0123456789abcdef\\u00e9\"", "\"01234567\"", "\"0123456\\\"\"", `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`,
	`"abc`, `"a\q"`, `"a\u12"`, `"a\u12g4"`, "\"a\nb\"", `{} {}`, `[1 2]`, `{"a":1 "b":2}`, ``, ` `, `[`, `{`, `"\`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 100) + strings.Repeat("]", 100),
	`{"a":[{"b":[{"c":"d"}]}]}`, "[1,\t2\r\n]", `1 `, ` 1`, `"\u0000"`, `[-]`, `[00]`, `[1.0e5]`,
	`"\u00e9"`, `"\x"`, `"a\"`, `"\/"`, "\"tab\there\"", `{"a":1}x`, `{"a":1}{}`, `[[[[]]]]`,
	`{"iteration":1}`, `{"iteration":1,"tool":"calc","call_id":"c 1"}`, `[1,2,3]`, `"str"`, `12.5e3`,
	`{ }`, "{\n}", `{"a":"<"}`, `{"a":"\u003c"}`, `{"a":"&"}`, "{\"a\":\"\u2028\"}", `{"a":"\u2028"}`,
	"{\"a\":\"0123456789\u2029\"}", "{\"a\":\"01234567\xe2\x80\xa7 plain\"}", "{\"a\":\"01234567>\"}",
	`{"a":"x\"y"}`, `{"a":"x\\"}`, `{"a":"x\\\" y"}`, `{"a":" spaced "}`, "{\"a\":\"\xff\"}",
	`["a", "b"]`, `["a","b"]`, "{\"a\":\"\xe2\x80\"}", "\"\xe2\x80\xa8\"", "\"\xe2\x80\"",
}

// mutations returns the samples and many random one-to-three-byte
// mutations of the valid ones: most break them in one place.
func mutations() []string {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = `{}[]":,\ 0123456789.-+eEtruefalsnu<>&` + "\n\x01\xff\xe2\x80\xa8"
	out := append([]string(nil), samples...)
	for range 20000 {
		b := []byte(samples[r.IntN(13)])
		for range r.IntN(3) + 1 {
			if len(b) == 0 {
				break
			}
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		out = append(out, string(b))
	}
	return out
}

func checkValid(t *testing.T, b []byte) {
	t.Helper()
	if got, want := Valid(b), json.Valid(b); got != want {
		t.Fatalf("Valid(%q) = %v, json.Valid says %v", b, got, want)
	}
}

// checkCompact checks Compact against json.Marshal: true exactly when
// Marshal leaves b as it is.
func checkCompact(t *testing.T, b []byte) {
	t.Helper()
	out, err := json.Marshal(json.RawMessage(b))
	want := err == nil && len(b) > 0 && bytes.Equal(out, b)
	if got := Compact(b); got != want {
		t.Fatalf("Compact(%q) = %v, but json.Marshal gives %q, %v", b, got, out, err)
	}
	if err == nil && !Compact(out) {
		t.Fatalf("json.Marshal(%q) = %q is not recognised as compact", b, out)
	}
}

func TestValidMatchesEncodingJSON(t *testing.T) {
	for _, in := range mutations() {
		checkValid(t, []byte(in))
	}
}

func TestCompactMatchesMarshal(t *testing.T) {
	compact := 0
	for _, in := range mutations() {
		checkCompact(t, []byte(in))
		if Compact([]byte(in)) {
			compact++
		}
	}
	if compact < 1000 {
		t.Errorf("only %d inputs were compact; the test exercises too little", compact)
	}
}

func TestDepth(t *testing.T) {
	for _, n := range []int{1, maxDepth - 1, maxDepth, maxDepth + 1, 20000} {
		b := []byte(strings.Repeat("[", n) + strings.Repeat("]", n))
		checkValid(t, b)
		checkCompact(t, b)
	}
}

func FuzzValid(f *testing.F) {
	for _, s := range samples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		checkValid(t, b)
		checkCompact(t, b)
	})
}

// TestMasks checks stopBytes in both modes against a byte-by-byte
// search, on words of every byte value at every position, among plain and
// random neighbours.
func TestMasks(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	escaped := func(c byte) bool { return special(c) || c == '<' || c == '>' || c == '&' || c == 0xE2 }
	masks := []struct {
		name string
		mask func(uint64) uint64
		is   func(byte) bool
	}{
		{"stopBytes", scanner{}.stopBytes, special},
		{"stopBytes (compact)", scanner{compact: true}.stopBytes, escaped},
	}
	r := rand.New(rand.NewPCG(5, 6))
	var w [8]byte
	for _, m := range masks {
		for pos := range 8 {
			for c := range 256 {
				for trial := range 20 {
					for i := range w {
						w[i] = 'a'
						if trial > 0 {
							w[i] = byte(r.IntN(256))
						}
					}
					w[pos] = byte(c)
					want := 8 // no special byte
					for i, b := range w {
						if m.is(b) {
							want = i
							break
						}
					}
					got := 8
					if v := m.mask(binary.LittleEndian.Uint64(w[:])); v != 0 {
						got = bits.TrailingZeros64(v) / 8
					}
					if got != want {
						t.Fatalf("%s(%q): first byte at %d, want %d", m.name, w[:], got, want)
					}
				}
			}
		}
	}
}

func BenchmarkValid(b *testing.B) {
	ev := []byte(samples[12])
	b.Run("Valid", func(b *testing.B) {
		for b.Loop() {
			Valid(ev)
		}
	})
	b.Run("Compact", func(b *testing.B) {
		for b.Loop() {
			Compact(ev)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		for b.Loop() {
			json.Valid(ev)
		}
	})
}

// BenchmarkCompactStep checks the two shapes of the send path: a step
// payload as engine.ActorEvents encodes it (which the runtime checks before
// splicing it) and a step detail.
func BenchmarkCompactStep(b *testing.B) {
	for _, c := range []struct{ name, json string }{
		{"payload", `{"run_id":"019a2b3c-4d5e-7f60-8a9b-0c1d2e3f4a5b","actor":"echo","kind":"model","detail":{"iteration":1,"finish_reason":"stop"}}`},
		{"detail", `{"iteration":1}`},
	} {
		raw := []byte(c.json)
		if !Compact(raw) {
			b.Fatalf("%s is not compact", raw)
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				Compact(raw)
			}
		})
	}
}
