package memstore

import (
	"encoding/json"
	"math/rand/v2"
	"strings"
	"testing"
)

var jsonSamples = []string{
	`{}`, `[]`, `""`, `0`, `-0`, `1.5e+10`, `-1E-2`, `true`, `false`, `null`, ` {"a" : [1, 2 ,{"b":null}] } `,
	`{"run_id":"r","seq":1,"type":"delta","time":"2026-01-01T00:00:00Z","actor":"echo","text":"h\u00e9\"\\\/\b\f\n\r\t"}`,
	"\"\xff\xfe\"", `{"a":1,}`, `[1,]`, `{"a"}`, `{"a":}`, `{a:1}`, `01`, `-`, `1.`, `.5`, `1e`, `1e+`, `+1`, `tru`, `nul`, `truex`,
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
		b := []byte(jsonSamples[r.IntN(12)])
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
	ev := []byte(jsonSamples[11])
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
