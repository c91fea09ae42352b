package model

import (
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"math/bits"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"
)

// The AppendJSON methods and functions of this file write exactly the bytes
// encoding/json's Marshal writes for the same value (HTML-safe escaping
// included), without reflection and, but for metadata maps, without
// allocating. Where Marshal would fail — a time RFC 3339 cannot carry,
// raw JSON that is not valid, metadata it cannot encode — they return an
// error and output that callers must discard; encoding/json then reports
// the failure its own way.

// errRawJSON is raw JSON (a data part, tool-call arguments) that is not
// valid JSON.
var errRawJSON = errors.New("model: raw JSON member is not valid JSON")

// AppendJSON appends the JSON encoding of m to dst.
func (m Message) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, '{')
	if m.ID != "" {
		dst = append(dst, `"id":`...)
		dst = AppendJSONString(dst, m.ID)
		dst = append(dst, ',')
	}
	dst = append(dst, `"role":`...)
	dst = AppendJSONString(dst, string(m.Role))
	dst = append(dst, `,"parts":`...)
	dst, err := appendParts(dst, m.Parts)
	if err != nil {
		return dst, err
	}
	if m.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, m.Name)
	}
	if len(m.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, m.Metadata); err != nil {
			return dst, err
		}
	}
	if !m.CreatedAt.IsZero() {
		dst = append(dst, `,"created_at":`...)
		if dst, err = AppendJSONTime(dst, m.CreatedAt); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the JSON encoding of a to dst.
func (a Artifact) AppendJSON(dst []byte) ([]byte, error) {
	dst = append(dst, `{"id":`...)
	dst = AppendJSONString(dst, a.ID)
	if a.Name != "" {
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, a.Name)
	}
	if a.Description != "" {
		dst = append(dst, `,"description":`...)
		dst = AppendJSONString(dst, a.Description)
	}
	dst = append(dst, `,"parts":`...)
	dst, err := appendParts(dst, a.Parts)
	if err != nil {
		return dst, err
	}
	if len(a.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, a.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// appendParts appends parts as a JSON array (null when nil).
func appendParts(dst []byte, parts []Part) ([]byte, error) {
	if parts == nil {
		return append(dst, "null"...), nil
	}
	dst = append(dst, '[')
	for i := range parts {
		if i > 0 {
			dst = append(dst, ',')
		}
		var err error
		if dst, err = parts[i].AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	return append(dst, ']'), nil
}

// AppendJSON appends the JSON encoding of p to dst.
func (p Part) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"type":`...)
	dst = AppendJSONString(dst, string(p.Type))
	if p.Text != "" {
		dst = append(dst, `,"text":`...)
		dst = AppendJSONString(dst, p.Text)
	}
	if len(p.Data) > 0 {
		dst = append(dst, `,"data":`...)
		if dst, err = appendRawJSON(dst, p.Data); err != nil {
			return dst, err
		}
	}
	if f := p.File; f != nil {
		dst = append(dst, `,"file":{`...)
		sep := ""
		if f.Name != "" {
			dst = append(dst, `"name":`...)
			dst = AppendJSONString(dst, f.Name)
			sep = ","
		}
		if len(f.Bytes) > 0 {
			dst = append(dst, sep+`"bytes":"`...)
			dst = base64.StdEncoding.AppendEncode(dst, f.Bytes)
			dst = append(dst, '"')
			sep = ","
		}
		if f.URL != "" {
			dst = append(dst, sep+`"url":`...)
			dst = AppendJSONString(dst, f.URL)
		}
		dst = append(dst, '}')
	}
	if c := p.ToolCall; c != nil {
		dst = append(dst, `,"tool_call":{"id":`...)
		dst = AppendJSONString(dst, c.ID)
		dst = append(dst, `,"name":`...)
		dst = AppendJSONString(dst, c.Name)
		if len(c.Arguments) > 0 {
			dst = append(dst, `,"arguments":`...)
			if dst, err = appendRawJSON(dst, c.Arguments); err != nil {
				return dst, err
			}
		}
		dst = append(dst, '}')
	}
	if r := p.ToolResult; r != nil {
		dst = append(dst, `,"tool_result":{"tool_call_id":`...)
		dst = AppendJSONString(dst, r.ToolCallID)
		if r.Name != "" {
			dst = append(dst, `,"name":`...)
			dst = AppendJSONString(dst, r.Name)
		}
		dst = append(dst, `,"content":`...)
		dst = AppendJSONString(dst, r.Content)
		if r.IsError {
			dst = append(dst, `,"is_error":true`...)
		}
		dst = append(dst, '}')
	}
	if p.MediaType != "" {
		dst = append(dst, `,"media_type":`...)
		dst = AppendJSONString(dst, p.MediaType)
	}
	if len(p.Metadata) > 0 {
		dst = append(dst, `,"metadata":`...)
		if dst, err = appendMetadata(dst, p.Metadata); err != nil {
			return dst, err
		}
	}
	return append(dst, '}'), nil
}

// AppendJSON appends the JSON encoding of u to dst.
func (u TokenUsage) AppendJSON(dst []byte) []byte {
	dst = append(dst, `{"input_tokens":`...)
	dst = strconv.AppendInt(dst, u.InputTokens, 10)
	dst = append(dst, `,"output_tokens":`...)
	dst = strconv.AppendInt(dst, u.OutputTokens, 10)
	dst = append(dst, `,"total_tokens":`...)
	dst = strconv.AppendInt(dst, u.TotalTokens, 10)
	return append(dst, '}')
}

// appendMetadata appends a metadata map the way encoding/json does (keys
// sorted); it is the one member that goes through encoding/json.
func appendMetadata(dst []byte, m map[string]any) ([]byte, error) {
	b, err := json.Marshal(m)
	return append(dst, b...), err
}

// AppendJSONTime appends t as encoding/json writes a time.Time: an RFC 3339
// string with sub-second precision. Times RFC 3339 cannot carry (a year
// outside 0–9999, a zone offset of a day or more) are an error.
func AppendJSONTime(dst []byte, t time.Time) ([]byte, error) {
	dst = append(dst, '"')
	if out, ok := appendUTCTime(dst, t); ok {
		return append(out, '"'), nil
	}
	out, err := t.AppendText(dst)
	if err != nil {
		return dst, err
	}
	return append(out, '"'), nil
}

// AppendRFC3339Nano appends t as t.AppendFormat(dst, time.RFC3339Nano)
// does, several times faster for the UTC times agentd stamps and stores.
func AppendRFC3339Nano(dst []byte, t time.Time) []byte {
	if out, ok := appendUTCTime(dst, t); ok {
		return out
	}
	return t.AppendFormat(dst, time.RFC3339Nano)
}

// Unix seconds of 0000-01-01T00:00:00Z and of 10000-01-01T00:00:00Z: the
// years time.RFC3339Nano writes as four digits.
const (
	unixYear0     = -62167219200
	unixYear10000 = 253402300800
)

// appendUTCTime appends t in time.RFC3339Nano's layout, trailing zeros of
// the fraction left out, if t is in UTC and within years 0–9999 (where
// that is also what MarshalText writes); otherwise it reports false,
// appending nothing. The civil date is computed as the time package
// computes it (Neri and Schneider, "Euclidean affine functions and their
// application to calendar algorithms", 2022), from a day count starting
// at 0000-03-01 less an era of 400 years, so that it is never negative.
func appendUTCTime(dst []byte, t time.Time) ([]byte, bool) {
	sec := t.Unix()
	if t.Location() != time.UTC || sec < unixYear0 || sec >= unixYear10000 {
		return dst, false
	}
	const daysPerEra = 146097
	secs := uint64(sec - unixYear0)
	days := secs/86400 + daysPerEra - 60 // 0000-03-01 is day 60 of year 0, a leap year
	daySec := uint32(secs % 86400)

	d := 4*days + 3
	century := uint32(d / daysPerEra)
	hi, lo := bits.Mul32(2939745, uint32(d%daysPerEra)|3)
	year, yday := 100*century+hi, lo/2939745/4 // yday 0 is March 1
	md := 2141*yday + 197913
	month, day := md>>16, (md&0xFFFF)/2141+1
	if yday >= 306 { // January or February of the next year
		year++
		month -= 12
	}
	year -= 400

	const longest = len("2006-01-02T15:04:05.999999999Z")
	n := len(dst)
	dst = slices.Grow(dst, longest)
	b := (*[longest]byte)(dst[n : n+longest])
	put2(b[0:], year/100)
	put2(b[2:], year%100)
	b[4] = '-'
	put2(b[5:], month)
	b[7] = '-'
	put2(b[8:], day)
	b[10] = 'T'
	put2(b[11:], daySec/3600)
	b[13] = ':'
	put2(b[14:], daySec/60%60)
	b[16] = ':'
	put2(b[17:], daySec%60)
	end := len("2006-01-02T15:04:05")
	if ns := uint32(t.Nanosecond()); ns != 0 {
		b[19] = '.'
		put2(b[20:], ns/1e7)
		put2(b[22:], ns/1e5%100)
		put2(b[24:], ns/1e3%100)
		put2(b[26:], ns/10%100)
		b[28] = byte('0' + ns%10)
		// Trailing zeros are left out: the zero bytes at the top of
		// digits 2–9 xor '0'. Digit 1 is not zero if they all are.
		zeros := bits.LeadingZeros64(binary.LittleEndian.Uint64(b[21:29])^ones*'0') / 8
		end = 29 - zeros
	}
	b[end] = 'Z'
	return dst[:n+end+1], true
}

// put2 writes v < 100 as two decimal digits to b[0:2].
func put2(b []byte, v uint32) {
	binary.LittleEndian.PutUint16(b, digitPairs[v])
}

// digitPairs holds the two decimal digits of 0–99, the first in the low
// byte, for put2 to store in one go.
var digitPairs = func() (pairs [100]uint16) {
	for v := range pairs {
		pairs[v] = uint16('0'+v/10) | uint16('0'+v%10)<<8
	}
	return pairs
}()

// AppendJSONString appends s as a JSON string, escaped as encoding/json
// escapes it: quotes, backslashes and control characters; <, > and & (as
// \u003c, \u003e, \u0026); U+2028 and U+2029; and each byte of invalid
// UTF-8 as \ufffd. Most strings need no escaping at all, which PlainLen
// finds a machine word at a time.
func AppendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	if n := PlainLen(s); n < len(s) {
		dst = append(dst, s[:n]...)
		dst = appendEscaped(dst, s[n:])
	} else {
		dst = append(dst, s...)
	}
	return append(dst, '"')
}

// appendEscaped appends the contents of s as a JSON string, escaped.
func appendEscaped(dst []byte, s string) []byte {
	start := 0
	for i := 0; i < len(s); {
		b := s[i]
		if b < utf8.RuneSelf {
			if htmlSafe[b] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			i += PlainLen(s[i:]) // up to the next byte to escape, maybe
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case c == utf8.RuneError && size == 1:
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
		case c == '\u2028' || c == '\u2029':
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	return append(dst, s[start:]...)
}

// htmlSafe marks the ASCII bytes a JSON string carries as they are.
var htmlSafe = func() (safe [utf8.RuneSelf]bool) {
	for b := ' '; b < utf8.RuneSelf; b++ {
		switch b {
		case '"', '\\', '<', '>', '&':
		default:
			safe[b] = true
		}
	}
	return safe
}()

const hexDigits = "0123456789abcdef"

// plainByte marks the bytes PlainLen passes over: those htmlSafe marks
// but DEL, which strconv.Quote escapes.
var plainByte = func() (plain [256]bool) {
	copy(plain[:], htmlSafe[:])
	plain[0x7f] = false
	return plain
}()

// PlainLen returns the length of the longest prefix of s made of printable
// ASCII other than '"', '\\', '<', '>' and '&': bytes that encoding/json
// (HTML-safe) and strconv.Quote both copy as they are. It tests eight bytes
// at a time.
func PlainLen(s string) int {
	if len(s) < 8 { // names and the like: byte by byte is cheaper
		i := 0
		for i < len(s) && plainByte[s[i]] {
			i++
		}
		return i
	}
	i := 0
	for ; len(s)-i >= 8; i += 8 {
		if m := unplainBytes(load64(s[i:])); m != 0 {
			return i + bits.TrailingZeros64(m)/8
		}
	}
	rest := len(s) - i
	if rest == 0 {
		return i
	}
	// The last rest bytes, of a word overlapping the last one tested,
	// shifted down: the zero bytes shifted in are control characters, so
	// the mask is not empty and stops at len(s) at the latest.
	w := load64(s[len(s)-8:]) >> (8 * (8 - rest))
	return i + bits.TrailingZeros64(unplainBytes(w))/8
}

// Word-at-a-time ("SWAR") byte tests: ones has 1 in every byte, highs the
// high bit of every byte.
const ones, highs = 0x0101010101010101, 0x8080808080808080

// unplainBytes returns the high bits of the bytes of w that PlainLen stops
// at: < 0x20, >= 0x7f, '"', '&', '<', '>' and '\\'. It computes on the
// low seven bits of each byte, where adding at most 0x80 cannot carry into
// the next byte, so every bit is exact; bytes >= 0x80 are added at the end.
func unplainBytes(w uint64) uint64 {
	x := w &^ highs
	printable := x + ones*(0x80-0x20)                      // x >= 0x20
	notQuoteAmp := ((x | ones*4) ^ ones*'&') + ones*0x7f   // x is neither '"' (0x22) nor '&' (0x26)
	notAngle := ((x &^ (ones * 2)) ^ ones*'<') + ones*0x7f // neither '<' (0x3c) nor '>' (0x3e)
	notBackslash := (x ^ ones*'\\') + ones*0x7f
	plain := printable & notQuoteAmp & notAngle & notBackslash &^ (x + ones) &^ w // and x < 0x7f, w < 0x80
	return ^plain & highs
}

// load64 returns the first eight bytes of s as a little-endian word (the
// compiler makes it one load).
func load64(s string) uint64 {
	_ = s[7]
	return uint64(s[0]) | uint64(s[1])<<8 | uint64(s[2])<<16 | uint64(s[3])<<24 |
		uint64(s[4])<<32 | uint64(s[5])<<40 | uint64(s[6])<<48 | uint64(s[7])<<56
}

// appendRawJSON appends raw JSON text compacted and HTML-escaped, as
// encoding/json writes a json.RawMessage; text that is not valid JSON is an
// error. In valid JSON, the characters to escape occur only in strings.
func appendRawJSON(dst, raw []byte) ([]byte, error) {
	if !json.Valid(raw) {
		return dst, errRawJSON
	}
	inString, escaped := false, false
	start := 0
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case inString:
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				start = i + 1
			case c == 0xE2 && i+2 < len(raw) && raw[i+1] == 0x80 && raw[i+2]&^1 == 0xA8:
				dst = append(dst, raw[start:i]...)
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[raw[i+2]&0xF])
				i += 2
				start = i + 1
			}
		case c == '"':
			inString = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			dst = append(dst, raw[start:i]...)
			start = i + 1
		}
	}
	return append(dst, raw[start:]...), nil
}

// FlatJSON reports whether every key and value of m comes back unchanged
// from an encoding/json round trip: keys and strings of valid UTF-8, finite
// numbers (float64), booleans and nulls, nothing nested. A shallow copy of
// such a map is a deep one, and storing it as JSON loses nothing.
func FlatJSON(m map[string]any) bool {
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
