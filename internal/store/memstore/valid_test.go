package memstore

import (
	"encoding/binary"
	"encoding/json"
	"math/bits"
	"math/rand/v2"
	"strings"
	"testing"
)

var jsonSamples = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{"b":null}] } `,
	`{"run_id":"r","seq":1,"type":"delta","time":"2026-01-01T00:00:00Z","actor":"echo","text":"h\u00e9\"\\\/\b\f\n\r\t"}`,
	`{"run_id":"01a202e1-5e64-7002-8f10-9e9b290196fa","seq":4,"type":"step.start","time":"2026-11-22T10:49:20.123456Z","actor":"echo","payload":{"kind":"model","text":"h\u00e9llo \"wörld\" \\ ≠ 𝄞 <&>","detail":{"iteration":1}}}`,
	"\"\xff\xfe\"", "\"0123456\x1f\"", "\"01234567\x7f\x80\"", "\"0123456789abcdef\\u00e9\"", "\"01234567\"", "\"0123456\\\"\"", `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`,
	`"abc`, `"a\q"`, `"a\u12"`, `"a\u12g4"`, "\"a\nb\"", `{} {}`, `[1 2]`, `{"a":1 "b":2}`, ``, ` `, `[`, `{`, `"\`,
	strings.Repeat("[", 10001) + strings.Repeat("]", 10001), strings.Repeat("[", 100) + strings.Repeat("]", 100),
	`{"a":[{"b":[{"c":"d"}]}]}`, "[1,\t2\r\n]", `1 `, ` 1`, `"\u0000"`, `[-]`, `[00]`, `[1.0e5]`,
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	const alphabet = `{}[]":,\ 0123456789.-+eEtruefalsnu` + "\n\x01\xff"
	inputs := append([]string(nil), jsonSamples...)
	for range 20000 {
		// Mutate a valid sample: most mutations break it in one place.
		b := []byte(jsonSamples[r.IntN(13)])
		for range r.IntN(3) + 1 {
			if len(b) == 0 {
				break
			}
			b[r.IntN(len(b))] = alphabet[r.IntN(len(alphabet))]
		}
		inputs = append(inputs, string(b))
	}
	for _, in := range inputs {
		if got, want := validJSON([]byte(in)), json.Valid([]byte(in)); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", in, got, want)
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, s := range jsonSamples {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

func BenchmarkValidJSON(b *testing.B) {
	ev := []byte(jsonSamples[12])
	b.Run("validJSON", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			validJSON(ev)
		}
	})
	b.Run("json.Valid", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			json.Valid(ev)
		}
	})
}

// TestSpecialBytes checks specialBytes against a byte-by-byte search, on
// words of every byte value at every position, among plain and random
// neighbours.
func TestSpecialBytes(t *testing.T) {
	special := func(c byte) bool { return c == '"' || c == '\\' || c < 0x20 }
	r := rand.New(rand.NewPCG(5, 6))
	var w [8]byte
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
					if special(b) {
						want = i
						break
					}
				}
				got := 8
				if m := specialBytes(binary.LittleEndian.Uint64(w[:])); m != 0 {
					got = bits.TrailingZeros64(m) / 8
				}
				if got != want {
					t.Fatalf("specialBytes(%q): first special byte at %d, want %d", w[:], got, want)
				}
			}
		}
	}
}
