package strictjson

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// sendBody has the shape of the REST API's send body, whose decoding
// errors the API answers with the PathError's Path as the problem's field.
type sendBody struct {
	Message  *inner         `json:"message,omitempty"`
	Text     string         `json:"text,omitempty"`
	Metadata map[string]any `json:"metadata,omitempty"`
	Raw      any            `json:"raw,omitempty"`
}

// manyKeys is an object of n distinct members k0…k(n-1), then extra.
func manyKeys(n int, extra string) string {
	var b strings.Builder
	b.WriteString(`{"metadata": {`)
	for i := range n {
		fmt.Fprintf(&b, `"k%d": %d, `, i, i)
	}
	b.WriteString(extra + `}}`)
	return b.String()
}

// textCases are documents that are JSON but not I-JSON, with the mistake
// Decode must report.
var textCases = []struct {
	in, path, msg string
}{
	{`{"text": "a", "text": "b"}`, "text", duplicateMsg},
	{`{"text": "a", "metadata": {}, "text": "a"}`, "text", duplicateMsg},
	{`{"message": {"role": "user", "parts": [{"type": "text", "type": "image"}]}}`, "message.parts[0].type", duplicateMsg},
	{`{"message": {"parts": [{"type": "a"}, {"text": "x", "type": "b", "text": "y"}]}}`, "message.parts[1].text", duplicateMsg},
	{`{"metadata": {"k": 1, "K": 2, "k": 3}}`, "metadata.k", duplicateMsg},
	{`{"text": "a", "t\u0065xt": "b"}`, "text", duplicateMsg},
	{`{"metadata": {"é": 1, "\u00e9": 2}}`, "metadata.é", duplicateMsg},
	{`{"raw": [{"a": {"b": 1, "b": 2}}]}`, "raw[0].a.b", duplicateMsg},
	{`{"metadata": {"a": 1}, "metadata": {"a": 1}}`, "metadata", duplicateMsg},
	{manyKeys(8, `"k7": 0`), "metadata.k7", duplicateMsg},
	{manyKeys(20, `"k3": 0`), "metadata.k3", duplicateMsg},
	{manyKeys(20, `"k19": 0`), "metadata.k19", duplicateMsg},
	{"{\"text\": \"\xff\xfe\"}", "text", "invalid UTF-8 (byte 0xff)"},
	{"{\"text\": \"ok \xed\xa0\x80\"}", "text", "invalid UTF-8 (byte 0xed)"}, // a surrogate in UTF-8
	{"{\"text\": \"caf\xc3\"}", "text", "invalid UTF-8 (byte 0xc3)"},
	{`{"text": "\ud800"}`, "text", `lone surrogate \ud800`},
	{`{"text": "x\uDBFF\u0041"}`, "text", `lone surrogate \udbff`},
	{`{"text": "\ud83d\ud83d\ude00"}`, "text", `lone surrogate \ud83d`},
	{`{"text": "\udc00\ud800"}`, "text", `lone surrogate \udc00`},
	{`{"message": {"parts": [{"type": "text", "text": "a\\\udfff"}]}}`, "message.parts[0].text", `lone surrogate \udfff`},
	{"{\"metadata\": {\"k\": [\"fine\", \"\x80\"]}}", "metadata.k[1]", "invalid UTF-8 (byte 0x80)"},
	{"{\"raw\": \"\xff\"}", "raw", "invalid UTF-8 (byte 0xff)"},
	{"{\"te\xffxt\": \"a\"}", "", `member name "te\xffxt": invalid UTF-8 (byte 0xff)`},
	{`{"metadata": {"\ud800": 1}}`, "metadata", `member name "\\ud800": lone surrogate \ud800`},
	// A duplicate is reported before an unknown member: it comes first.
	{`{"text": "a", "text": "b", "txt": "c"}`, "text", duplicateMsg},
	// A case variant of a member is not that member.
	{`{"text": "a", "TEXT": "b"}`, "TEXT", `unknown field (did you mean "text"? names are case-sensitive)`},
}

func TestDecodeRejectsWhatIJSONForbids(t *testing.T) {
	for _, c := range textCases {
		if ok, _ := knownKeys([]byte(c.in), reflect.TypeFor[*sendBody]()); ok {
			t.Errorf("%q: knownKeys takes it", c.in)
		}
		for name, decode := range map[string]func([]byte, any) error{"Decode": Decode, "decodeExact": decodeExact} {
			var v sendBody
			err := decode([]byte(c.in), &v)
			var pe *PathError
			if !errors.As(err, &pe) || pe.Path != c.path || pe.Msg != c.msg {
				t.Errorf("%s(%q) = %#v\nwant path %q msg %q", name, c.in, err, c.path, c.msg)
			}
		}
		sameOutcome(t, []byte(c.in), func() any { return new(wide) })
		sameOutcome(t, []byte(c.in), func() any { return new(map[string]any) })
	}
}

func TestDecodeAcceptsIJSON(t *testing.T) {
	for _, c := range []struct {
		in   string
		want sendBody
	}{
		{`{"text": "😀 \ud83d\ude00 \\ud800 \u00e9 é"}`, sendBody{Text: `😀 😀 \ud800 é é`}},
		{`{"text": "\ufffd�"}`, sendBody{Text: "\ufffd\ufffd"}},
		{`{"metadata": {"k": 1, "K": 2, "k ": 3, "é": 4, "e": 5}}`, sendBody{Metadata: map[string]any{"k": 1.0, "K": 2.0, "k ": 3.0, "é": 4.0, "e": 5.0}}},
		{`{"message": {"parts": [{"type": "a"}, {"type": "b"}]}, "raw": [{"a": 1}, {"a": 2}]}`, sendBody{
			Message: &inner{Parts: []part{{Type: "a"}, {Type: "b"}}},
			Raw:     []any{map[string]any{"a": 1.0}, map[string]any{"a": 2.0}},
		}},
		{manyKeys(30, `"k30": 30`), sendBody{Metadata: func() map[string]any {
			m := map[string]any{}
			for i := range 31 {
				m[fmt.Sprint("k", i)] = float64(i)
			}
			return m
		}()}},
	} {
		var v sendBody
		if err := Decode([]byte(c.in), &v); err != nil {
			t.Errorf("%q: %v", c.in, err)
		} else if !reflect.DeepEqual(v, c.want) {
			t.Errorf("%q: got %+v, want %+v", c.in, v, c.want)
		}
	}
}

func TestKnownKeysDoesNotAllocate(t *testing.T) {
	doc := []byte(`{"message": {"role": "user", "parts": [{"type": "text", "text": "h\u00e9llo"}], "metadata": {"k": [1, "x"], "é": "😀"}}, "text": "x"}`)
	typ := reflect.TypeFor[*sendBody]()
	if ok, _ := knownKeys(doc, typ); !ok {
		t.Fatal("knownKeys refuses the document")
	}
	if n := testing.AllocsPerRun(100, func() { knownKeys(doc, typ) }); n != 0 {
		t.Errorf("knownKeys allocates %v times", n)
	}
}

func TestTextProblem(t *testing.T) {
	for _, c := range []struct{ raw, want string }{
		{``, ``}, {`plain`, ``}, {`\u`, ``}, {`\u12`, ``}, {`\uzzzz`, ``}, {`\ud800\u`, `lone surrogate \ud800`},
		{`\ud800\udc00`, ``}, {`\uD800\uDC00`, ``}, {`\ud800\\udc00`, `lone surrogate \ud800`},
		{`\ue000`, ``}, {`\ud7ff`, ``}, {`\\\\ud800`, ``}, {"\xf4\x8f\xbf\xbf", ``}, {"\xf4\x90\x80\x80", `invalid UTF-8 (byte 0xf4)`},
	} {
		if got := textProblem([]byte(c.raw)); got != c.want {
			t.Errorf("textProblem(%q) = %q, want %q", c.raw, got, c.want)
		}
	}
}
