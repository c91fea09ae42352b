package strictjson

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"
)

// selfDecoding decodes itself; strictjson must not look inside it.
type selfDecoding struct{ Got string }

func (s *selfDecoding) UnmarshalJSON(b []byte) error {
	if string(b) == `"bad"` {
		return errors.New("bad value")
	}
	s.Got = string(b)
	return nil
}

// level decodes itself from text.
type level string

func (l *level) UnmarshalText(b []byte) error {
	if len(b) == 0 {
		return errors.New("empty level")
	}
	*l = level("level " + string(b))
	return nil
}

type Embedded struct {
	Inner string `json:"inner"`
	Deep  *inner `json:"deep,omitempty"`
}

// wide covers the shapes knownKeys must agree with the exact path on.
type wide struct {
	Embedded
	Message *inner                    `json:"message,omitempty"`
	Count   int                       `json:"count,omitempty"`
	Text    string                    `json:"text,omitempty"`
	Ratio   float64                   `json:"ratio,omitempty"`
	Small   int8                      `json:"small,omitempty"`
	Flag    bool                      `json:"flag,omitempty"`
	When    time.Time                 `json:"when,omitzero"`
	Bytes   []byte                    `json:"bytes,omitempty"`
	Raw     json.RawMessage           `json:"raw,omitempty"`
	Any     any                       `json:"any,omitempty"`
	Map     map[string]part           `json:"map,omitempty"`
	Nested  map[string][]*inner       `json:"nested,omitempty"`
	Arr     [2]part                   `json:"arr"`
	Self    selfDecoding              `json:"self"`
	SelfPtr *selfDecoding             `json:"self_ptr"`
	Quoted  int                       `json:"quoted,string,omitempty"`
	QuotedS string                    `json:"quoted_s,omitempty,string"`
	Level   level                     `json:"level,omitempty"`
	Role    Role                      `json:"role,omitempty"`
	Skip    string                    `json:"-"`
	NoTag   string                    //
	Dollar  string                    `json:"$ref,omitempty"`
	Num     json.Number               `json:"num,omitempty"`
	Iface   map[string]map[string]any `json:"iface,omitempty"`
	//lint:ignore U1000 an unexported field encoding/json must skip
	private string
}

// Role is a named string type, which takes strings as written.
type Role string

// notPlain has names encoding/json sees differently from strictjson.
type notPlain struct {
	*Embedded
	//lint:ignore SA5008 a tag that names the member "-"
	Dash  string `json:"-,"`
	Space string `json:"a b,omitempty"`
	Dup   string `json:"inner"`
}

var decodeCorpus = []string{
	`{}`, ` {} `, `{"count": 1}`, `{"count": 1} `, "{\"count\":\n1}\n",
	`{"count": 1} {}`, `{"count": 1}x`, `{"count": }`, `{"count": 1`, `{"count"`, `{`, ``, ` `,
	`[1]`, `"x"`, `1`, `null`, `true`, `nul`, `{"count": "three"}`, `{"COUNT": 1}`, `{"Count": 1}`,
	`{"message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}}`,
	`{"message": {"role": "user", "parts": [{"type": "text", "txt": "x"}]}}`,
	`{"message": {"role": "user", "parts": [{"TYPE": "text"}]}}`,
	`{"message": {"parts": [{"type": 3}]}}`,
	`{"message": {"metadata": {"ANY": {"Thing": [1, {"x": null}]}}, "Raw": {"a" : [ 1 , 2 ]}}}`,
	`{"message": {"bogus": 1}, "message": {"role": "user"}}`,
	`{"message": {"role": "user"}, "message": {"bogus": 1}}`,
	`{"inner": "x", "deep": {"role": "a", "parts": null}}`, `{"deep": {"rol": "a"}}`,
	`{"ratio": 1.5e3}`, `{"ratio": 1e400}`, `{"any": 1e400}`, `{"raw": 1e400}`, `{"any": -0.0}`,
	`{"ratio": ` + strings.Repeat("9", 400) + `}`, `{"count": 12345678901234567890123}`,
	`{"small": 300}`, `{"flag": 1}`, `{"flag": true}`, `{"when": "2026-11-22T08:00:00Z"}`,
	`{"when": "yesterday"}`, `{"when": 5}`, `{"bytes": "AAEC"}`, `{"bytes": "!!"}`, `{"bytes": [1, 2]}`,
	`{"map": {"a": {"type": "t"}, "b": {"tipe": "t"}}}`, `{"map": []}`, `{"map": {"a": 1}}`,
	`{"nested": {"a": [{"role": "r"}, null, {"roles": 1}]}}`,
	`{"arr": [{"type": "a"}, {"type": "b"}, {"type": "c"}]}`, `{"arr": [{"typ": "a"}]}`,
	`{"self": {"anything": 1}}`, `{"self": "bad"}`, `{"self_ptr": {"x": [1]}}`, `{"self_ptr": null}`,
	`{"quoted": "12"}`, `{"quoted": 12}`, `{"Skip": "x"}`, `{"-": "x"}`, `{"NoTag": "x"}`, `{"notag": "x"}`,
	`{"$ref": "x"}`, `{"num": 12}`, `{"num": "12"}`, `{"private": "x"}`, `{"Embedded": {}}`,
	`{"iface": {"a": {"b": {"c": 1}}}}`, `{"iface": {"a": 1}}`,
	`{"c\u006funt": 1}`, `{"count\u0000": 1}`, "{\"co\xffunt\": 1}", `{"cöunt": 1}`,
	`{"message": {"parts": [{"type": "te\"xt"}]}}`, `{"message": {"parts": [{"type": "\ud800"}]}}`,
	"{\"any\": \"\xff\"}", `{"any": "a` + "\x01" + `"}`, `{"count": 01}`, `{"count": -}`, `{"count": 1.}`,
	`{"count": 1,}`, `{,}`, `{"a" 1}`, `{"any": [1,]}`, `{"any": [}`, `{"any": tru}`, `{"any": nulll}`,
	strings.Repeat(`{"any":`, 600) + `1` + strings.Repeat(`}`, 600),
	strings.Repeat(`[`, 20) + strings.Repeat(`]`, 20),
	`{"text": "héllo"}`, "{\"text\": \"bad\xff\"}", `{"text": "a\nb"}`, "{\"text\": \"a\tb\"}", `{"text": "\u00e9"}`,
	`{"quoted_s": "\"x\""}`, `{"quoted_s": "x"}`, `{"level": "warn"}`, `{"level": ""}`, `{"role": "user", "text": "x"}`,
	`{"text": "a", "text": "b"}`, `{"inner": "x", "text": "y", "NoTag": "z", "$ref": "r"}`, `{"text": null}`, `{"Text": "x"}`,
	`{"text": "a", "count": 1}`, `{"text": 1}`, `{"text": "a", "text": 1}`, `{"num": "1"}`, `{"num": "x"}`, ` { "text" : "spaced" } `,
	`{"text": "a"}}`, `{"text": "a",}`, `{"text" "a"}`, `{"text": "a"`, `{"text": "a" "inner": "b"}`,
}

// sameOutcome decodes doc with Decode and decodeExact into fresh values of
// v's type and fails unless both agree.
func sameOutcome(t *testing.T, doc []byte, newV func() any) {
	t.Helper()
	fast, exact := newV(), newV()
	if w, ok := fast.(*wide); ok && w != nil { // decoding merges into what is there
		*w = wide{Text: "default", Count: 5, Embedded: Embedded{Inner: "d"}}
		*exact.(*wide) = *w
	}
	errF, errE := Decode(doc, fast), decodeExact(doc, exact)
	if fmt.Sprint(errF) != fmt.Sprint(errE) || reflect.TypeOf(errF) != reflect.TypeOf(errE) {
		t.Fatalf("%q:\n  Decode:      %#v\n  decodeExact: %#v", doc, errF, errE)
	}
	var pf, pe *PathError
	if errors.As(errF, &pf) && errors.As(errE, &pe) && *pf != *pe {
		t.Fatalf("%q: Decode %#v, decodeExact %#v", doc, pf, pe)
	}
	if errF == nil && !reflect.DeepEqual(fast, exact) {
		t.Fatalf("%q: Decode gave %+v, decodeExact %+v", doc, fast, exact)
	}
}

func TestDecodeMatchesTheExactPath(t *testing.T) {
	for _, doc := range decodeCorpus {
		sameOutcome(t, []byte(doc), func() any { return new(wide) })
		sameOutcome(t, []byte(doc), func() any { return new(doc) })
		sameOutcome(t, []byte(doc), func() any { return new(notPlain) })
		sameOutcome(t, []byte(doc), func() any { return new(map[string]any) })
		sameOutcome(t, []byte(doc), func() any { return new(*wide) })
		sameOutcome(t, []byte(doc), func() any { return (*wide)(nil) })
	}
}

func TestKnownKeysTakesTheCommonCase(t *testing.T) {
	for _, c := range []struct {
		doc      string
		v        any
		ok, flat bool
	}{
		{`{"message": {"role": "user", "parts": [{"type": "text", "text": "x"}]}, "count": 2}`, new(doc), true, false},
		{`{"inner": "x", "map": {"A": {"type": "t"}}, "self": {"Any": 1}, "any": {"X": [1, "y", null]}}`, new(wide), true, false},
		{`{"COUNT": 1}`, new(doc), false, false},
		{`{"c\u006funt": 1}`, new(doc), false, false},
		{`{"count": 1e3}`, new(doc), false, false},
		{`{"count": 1} x`, new(doc), false, false},
		{`{"inner": "x"}`, new(notPlain), false, false},
		{`{}`, new(wide), true, true},
		{` {"text": "héllo", "inner": "x", "NoTag": "y", "role": "r"} `, new(wide), true, true},
		{`{"text": "a", "inner": "x", "text": "b"}`, new(wide), false, false},
		{`{"text": "a\nb"}`, new(wide), true, false},
		{"{\"text\": \"bad\xff\"}", new(wide), false, false},
		{`{"text": "\ud83d\ude00"}`, new(wide), true, false},
		{`{"text": "\ud83d"}`, new(wide), false, false},
		{`{"map": {"a\u0062": {}}}`, new(wide), false, false},
		{`{"text": "a", "count": 1}`, new(wide), true, false},
		{`{"text": null}`, new(wide), true, false},
		{`{"num": "12"}`, new(wide), true, false},
		{`{"quoted_s": "\"x\""}`, new(wide), true, false},
		{`{"level": "warn"}`, new(wide), true, false},
		{`{"text": "x"}`, new(*wide), true, false},
		{`{"text": "x"}`, new(map[string]string), true, false},
	} {
		ok, flat := knownKeys([]byte(c.doc), reflect.TypeOf(c.v))
		if ok != c.ok || flat != c.flat {
			t.Errorf("knownKeys(%s, %T) = %v, %v; want %v, %v", c.doc, c.v, ok, flat, c.ok, c.flat)
		}
	}
}

func TestPlainness(t *testing.T) {
	if !structFields(reflect.TypeFor[wide]()).plain {
		t.Error("wide should be plain")
	}
	if structFields(reflect.TypeFor[notPlain]()).plain {
		t.Error("notPlain should not be plain")
	}
}

func FuzzDecodeMatchesTheExactPath(f *testing.F) {
	for _, doc := range decodeCorpus {
		f.Add([]byte(doc))
	}
	for _, c := range textCases {
		f.Add([]byte(c.in))
	}
	f.Fuzz(func(t *testing.T, doc []byte) {
		sameOutcome(t, doc, func() any { return new(wide) })
		sameOutcome(t, doc, func() any { return new(notPlain) })
	})
}

func BenchmarkDecode(b *testing.B) {
	docs := map[string]string{
		"text":    `{"text":"hello world"}`,
		"message": `{"message": {"role": "user", "parts": [{"type": "text", "text": "hello"}], "metadata": {"k": [1, "x"]}}, "count": 3}`,
	}
	for name, d := range docs {
		doc := []byte(d)
		b.Run(name+"/fast", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v wide
				if err := Decode(doc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(name+"/exact", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				var v wide
				if err := decodeExact(doc, &v); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkKnownKeys(b *testing.B) {
	docs := map[string]string{
		"text":     `{"text":"hello world"}`,
		"message":  `{"message": {"role": "user", "parts": [{"type": "text", "text": "hello"}], "metadata": {"k": [1, "x"]}}, "count": 3}`,
		"unicode":  `{"message": {"role": "user", "parts": [{"type": "text", "text": "h\u00e9llo \ud83d\ude00 wörld"}]}}`,
		"12 names": `{"iface": {"a": {"b0": 0, "b1": 1, "b2": 2, "b3": 3, "b4": 4, "b5": 5, "b6": 6, "b7": 7, "b8": 8, "b9": 9, "b10": 10, "b11": 11}}}`,
	}
	t := reflect.TypeFor[*wide]()
	for name, d := range docs {
		doc := []byte(d)
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if ok, _ := knownKeys(doc, t); !ok {
					b.Fatal("not known")
				}
			}
		})
	}
}
