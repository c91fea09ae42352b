package model

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"
)

// trickyStrings need escaping or are otherwise awkward for a JSON encoder.
var trickyStrings = []string{
	"", "plain", `"quoted" \back\slash/`, "<script>&amp;</script>", "line\nfeed\rcarriage\ttab\bback\fform",
	"\x00\x01\x1f\x7f", "sep\u2028par\u2029", "é日本語🙂", "bad\xffutf8\xc3", "\xe2\x80", "\xed\xa0\x80",
	"trailing\u2028", "\u2029", "\xe2\x80\xa8\xe2\x80\xa9<>&",
}

var trickyTimes = []time.Time{
	{},
	time.Date(2026, 11, 22, 8, 0, 0, 0, time.UTC),
	time.Date(2026, 11, 22, 8, 0, 0, 123456789, time.FixedZone("x", -7*3600-30*60)),
	time.Date(1, 1, 1, 0, 0, 0, 1, time.UTC),
	time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), // beyond RFC 3339
	time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("far", 25*3600)),
	time.Now(), // with a monotonic reading
}

var trickyRaw = []json.RawMessage{
	nil, {}, json.RawMessage(`{"a": [1, 2.5e3, true, null], "b" : "x"}`), json.RawMessage(" \t\n\"<tag> & \u2028 \\\" \\\\\" \r"),
	json.RawMessage(`"\u003c"`), json.RawMessage(`{"a":`), json.RawMessage(`1 2`), json.RawMessage("\"\xff\""),
	json.RawMessage(`[ ]`), json.RawMessage(`"\u2028 ` + "\u2028\u2029" + `"`),
}

var trickyMeta = []map[string]any{
	nil, {}, {"b": 1.5, "a": "x<y>", "c": []any{nil, true, map[string]any{"z": 1e21, "y": 1e-7}}},
	{"nan": math.NaN()}, {"chan": make(chan int)}, {"raw": json.RawMessage(`{ "x" : 1 }`)},
}

func sampleParts() []Part {
	var parts []Part
	for i, s := range trickyStrings {
		parts = append(parts, Part{Type: PartType(s), Text: s, MediaType: s},
			Part{Type: PartText, Text: s, Metadata: trickyMeta[i%len(trickyMeta)]})
	}
	for _, raw := range trickyRaw {
		parts = append(parts, Part{Type: PartData, Data: raw},
			ToolCallPart(ToolCall{ID: "c", Name: "n", Arguments: raw}))
	}
	parts = append(parts,
		FileBytesPart("a.bin", "application/octet-stream", []byte{0, 1, 2, 255, 254}),
		FileBytesPart("", "", []byte{}),
		FileURLPart("b<>.txt", "text/plain", "https://example.com/b?x=1&y=2"),
		Part{Type: PartFile, File: &File{}},
		ToolCallPart(ToolCall{}),
		ToolResultPart(ToolResult{ToolCallID: "c1", Name: "calc", Content: "3", IsError: true}),
		ToolResultPart(ToolResult{}),
		Part{},
	)
	return parts
}

func sampleMessages() []Message {
	msgs := []Message{{}, {Parts: []Part{}}, sample(), NewText(RoleUser, "hello world")}
	parts := sampleParts()
	for i, p := range parts {
		msgs = append(msgs, Message{
			ID: trickyStrings[i%len(trickyStrings)], Role: RoleAssistant, Parts: []Part{p},
			Name:      trickyStrings[(i+1)%len(trickyStrings)],
			Metadata:  trickyMeta[i%len(trickyMeta)],
			CreatedAt: trickyTimes[i%len(trickyTimes)],
		})
	}
	return append(msgs, Message{Role: RoleTool, Parts: parts})
}

// sameJSON fails unless fast writes what encoding/json's Marshal writes for
// v, or both fail.
func sameJSON(t *testing.T, v any, fast func([]byte) ([]byte, error)) {
	t.Helper()
	want, wantErr := json.Marshal(v)
	prefix := []byte("prefix:")
	got, err := fast(prefix)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("%+v: AppendJSON error %v, encoding/json error %v", v, err, wantErr)
	}
	if err == nil && (!bytes.HasPrefix(got, prefix) || !bytes.Equal(got[len(prefix):], want)) {
		t.Fatalf("%+v:\n got %s\nwant prefix:%s", v, got, want)
	}
}

func TestAppendJSONMatchesEncodingJSON(t *testing.T) {
	for _, m := range sampleMessages() {
		sameJSON(t, m, m.AppendJSON)
	}
	for _, p := range sampleParts() {
		sameJSON(t, p, p.AppendJSON)
	}
	for i, p := range [][]Part{nil, {}, sampleParts()} {
		a := Artifact{ID: fmt.Sprint(i), Name: trickyStrings[i], Description: trickyStrings[i+3], Parts: p, Metadata: trickyMeta[i]}
		sameJSON(t, a, a.AppendJSON)
	}
	for _, u := range []TokenUsage{{}, {InputTokens: 1, OutputTokens: -2, TotalTokens: math.MaxInt64}} {
		sameJSON(t, u, func(b []byte) ([]byte, error) { return u.AppendJSON(b), nil })
	}
	for _, s := range trickyStrings {
		sameJSON(t, s, func(b []byte) ([]byte, error) { return AppendJSONString(b, s), nil })
	}
	for _, tm := range trickyTimes {
		sameJSON(t, tm, func(b []byte) ([]byte, error) { return AppendJSONTime(b, tm) })
	}
}

func TestAppendJSONDoesNotAllocate(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	m := sample()
	m.Metadata = nil
	m.Parts[6].Metadata = nil
	buf := make([]byte, 0, 4096)
	if n := testing.AllocsPerRun(100, func() { _, _ = m.AppendJSON(buf) }); n != 0 {
		t.Fatalf("Message.AppendJSON allocates %v times", n)
	}
}

func FuzzAppendJSON(f *testing.F) {
	for i, s := range trickyStrings {
		raw := trickyRaw[i%len(trickyRaw)]
		f.Add(s, trickyStrings[(i+3)%len(trickyStrings)], []byte(raw), []byte(s), int64(i)*1e15, i)
	}
	f.Fuzz(func(t *testing.T, s1, s2 string, raw, bin []byte, nanos int64, kind int) {
		when := time.Unix(0, nanos).In(time.FixedZone("z", (kind%50)*3600))
		p := Part{Type: PartType(s1), Text: s2, MediaType: s1}
		switch kind & 7 {
		case 1:
			p = Part{Type: PartData, Data: raw, Metadata: map[string]any{s1: s2, s2: []any{s1, float64(nanos)}}}
		case 2:
			p = ToolCallPart(ToolCall{ID: s1, Name: s2, Arguments: raw})
		case 3:
			p = FileBytesPart(s1, s2, bin)
		case 4:
			p = FileURLPart(s1, s2, string(raw))
		case 5:
			p = ToolResultPart(ToolResult{ToolCallID: s1, Name: s2, Content: string(bin), IsError: nanos%2 == 0})
		}
		m := Message{ID: s2, Role: Role(s1), Name: string(bin), Parts: []Part{p, TextPart(s1)}, CreatedAt: when}
		sameJSON(t, m, m.AppendJSON)
		a := Artifact{ID: s1, Name: s2, Description: string(raw), Parts: m.Parts}
		sameJSON(t, a, a.AppendJSON)
		sameJSON(t, s1, func(b []byte) ([]byte, error) { return AppendJSONString(b, s1), nil })
	})
}

// isPlain is PlainLen's byte class, spelled out.
func isPlain(c byte) bool {
	return 0x20 <= c && c < 0x7f && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
}

// checkString compares AppendJSONString with json.Marshal and PlainLen
// with a byte-by-byte search.
func checkString(t *testing.T, s string) {
	t.Helper()
	sameJSON(t, s, func(b []byte) ([]byte, error) { return AppendJSONString(b, s), nil })
	want := 0
	for want < len(s) && isPlain(s[want]) {
		want++
	}
	if got := PlainLen(s); got != want {
		t.Fatalf("PlainLen(%q) = %d, want %d", s, got, want)
	}
}

// TestAppendJSONStringEveryPosition puts every byte value, and the
// multi-byte sequences that need care (U+2028, U+2029, invalid and
// truncated UTF-8, valid runes), at every position of plain strings of
// every length from 0 to 40, so that each lands in a full word, in the
// overlapping last word and in a string shorter than a word.
func TestAppendJSONStringEveryPosition(t *testing.T) {
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

func FuzzAppendJSONString(f *testing.F) {
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

// checkTime compares AppendRFC3339Nano with time.Format and
// AppendJSONTime with json.Marshal.
func checkTime(t *testing.T, tm time.Time) {
	t.Helper()
	prefix := []byte("prefix:")
	got := AppendRFC3339Nano(prefix, tm)
	if want := tm.AppendFormat(prefix[:len(prefix):len(prefix)], time.RFC3339Nano); !bytes.Equal(got, want) {
		t.Fatalf("AppendRFC3339Nano(%v) = %s, want %s", tm, got, want)
	}
	sameJSON(t, tm, func(b []byte) ([]byte, error) { return AppendJSONTime(b, tm) })
}

// TestAppendRFC3339Nano covers every month end of the leap-year cases,
// the ends of the four-digit years, fractions with every number of
// trailing zeros, other zones, and random instants across the range.
func TestAppendRFC3339Nano(t *testing.T) {
	for _, tm := range trickyTimes {
		checkTime(t, tm)
	}
	zones := []*time.Location{time.UTC, time.Local, time.FixedZone("z", -(5*3600 + 30*60)), time.FixedZone("zero", 0)}
	for _, year := range []int{0, 1, 4, 99, 100, 399, 400, 1600, 1900, 1969, 1970, 2000, 2024, 2100, 2400, 9996, 9999} {
		for month := time.January; month <= time.December; month++ {
			first := time.Date(year, month, 1, 0, 0, 0, 0, time.UTC)
			for _, tm := range []time.Time{first, first.Add(-time.Nanosecond), first.Add(12*time.Hour + 34*time.Minute + 56*time.Second + 7)} {
				for _, z := range zones {
					checkTime(t, tm.In(z))
				}
			}
		}
	}
	for _, tm := range []time.Time{time.Unix(unixYear0, 0), time.Unix(unixYear0-1, 999999999), time.Unix(unixYear10000, 0), time.Unix(unixYear10000-1, 999999999), time.Unix(0, 0), time.Unix(-1, 0)} {
		checkTime(t, tm.UTC())
	}
	base := time.Date(2026, 11, 22, 8, 30, 15, 0, time.UTC)
	for ns := 1; ns < 1e9; ns *= 10 {
		for _, v := range []int{ns, 9 * ns, 123456789 / ns * ns, 1e9 - ns} {
			checkTime(t, base.Add(time.Duration(v)))
		}
	}
	checkTime(t, time.Now().UTC()) // with a monotonic reading
	r := rand.New(rand.NewPCG(3, 4))
	for range 100000 {
		checkTime(t, time.Unix(unixYear0+r.Int64N(unixYear10000-unixYear0), r.Int64N(1e9)).UTC())
	}
}

func FuzzAppendRFC3339Nano(f *testing.F) {
	f.Add(int64(1700000000), int64(123456000), 0)
	f.Add(int64(unixYear0), int64(0), 1)
	f.Add(int64(unixYear10000-1), int64(999999999), 0)
	f.Fuzz(func(t *testing.T, sec, nsec int64, zone int) {
		tm := time.Unix(sec, nsec).UTC()
		checkTime(t, tm)
		checkTime(t, tm.In(time.FixedZone("z", zone%100000)))
	})
}

func BenchmarkMessageJSON(b *testing.B) {
	m := Message{ID: NewID(), Role: RoleAssistant, Name: "echo", Parts: []Part{TextPart("hello world")}, CreatedAt: time.Now()}
	b.Run("AppendJSON", func(b *testing.B) {
		b.ReportAllocs()
		buf := make([]byte, 0, 512)
		for b.Loop() {
			buf, _ = m.AppendJSON(buf[:0])
		}
	})
	b.Run("encoding/json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			_, _ = json.Marshal(m)
		}
	})
}

// TestFlatJSON checks FlatJSON against an encoding/json round trip.
func TestFlatJSON(t *testing.T) {
	for _, m := range []map[string]any{
		nil, {}, {"a": "x", "b": 1.5, "c": true, "d": nil}, {"a": "\xff"}, {"\xff": 1.0},
		{"a": math.NaN()}, {"a": math.Inf(1)}, {"a": 1}, {"a": []any{"x"}}, {"a": map[string]any{}},
	} {
		b, err := json.Marshal(m)
		var back map[string]any
		if err == nil {
			err = json.Unmarshal(b, &back)
		}
		same := err == nil && reflect.DeepEqual(back, m) || err == nil && len(m) == 0
		if got := FlatJSON(m); got && !same {
			t.Errorf("FlatJSON(%#v) = true, but a round trip gives %#v (%v)", m, back, err)
		}
	}
	if !FlatJSON(map[string]any{"a": "x", "b": 1.5, "c": true, "d": nil}) || FlatJSON(map[string]any{"a": 1}) {
		t.Error("FlatJSON misjudges a plain map or an int")
	}
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

func BenchmarkAppendJSONString(b *testing.B) {
	buf := make([]byte, 0, 512)
	for _, c := range benchStrings {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.s)))
			for b.Loop() {
				buf = AppendJSONString(buf[:0], c.s)
			}
		})
	}
}

func BenchmarkAppendJSONTime(b *testing.B) {
	buf := make([]byte, 0, 64)
	for _, c := range []struct {
		name string
		t    time.Time
	}{
		{"micros", time.Date(2026, 11, 22, 8, 30, 15, 123456000, time.UTC)},
		{"nanos", time.Date(2026, 11, 22, 8, 30, 15, 123456789, time.UTC)},
		{"whole", time.Date(2026, 11, 22, 8, 30, 15, 0, time.UTC)},
	} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				buf, _ = AppendJSONTime(buf[:0], c.t)
			}
		})
	}
}
