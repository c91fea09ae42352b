package strictjson

import (
	"encoding/json"
	"fmt"
	"hash/maphash"
	"unicode/utf8"
)

// strictjson asks of a document what I-JSON (RFC 7493) asks beyond JSON:
// each member name at most once per object, and every string Unicode
// text — UTF-8, with no escaped surrogate that is not half of a pair.
// encoding/json accepts both mistakes, the last duplicate winning and bad
// text becoming U+FFFD, so a request could read one way and run another.

// duplicateMsg is the message for a member named twice in one object.
const duplicateMsg = "duplicate member name: it may appear only once in an object"

// checkText reports the first place, in document order, where doc (one
// valid JSON value) repeats a member name or holds a string that is not
// Unicode text. It checks the whole document, whatever type it decodes
// into: a value kept as written (json.RawMessage, a type that decodes
// itself) is read again later, by a decoder that may be just as lenient.
func checkText(doc []byte) error {
	c := textChecker{keyScanner{b: doc}}
	return c.value("")
}

// textChecker walks valid JSON text for checkText.
type textChecker struct{ keyScanner }

func (c *textChecker) value(path string) error {
	c.space()
	switch c.b[c.i] {
	case '{':
		return c.object(path)
	case '[':
		return c.array(path)
	case '"':
		raw, _, _ := c.str()
		if p := textProblem(raw); p != "" {
			return &PathError{Path: path, Msg: p}
		}
		return nil
	}
	for c.i < len(c.b) { // a number or a literal
		switch c.b[c.i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return nil
		}
		c.i++
	}
	return nil
}

func (c *textChecker) object(path string) error {
	c.i++ // '{'
	seen := map[string]bool{}
	for {
		c.space()
		if c.b[c.i] == '}' {
			c.i++
			return nil
		}
		raw, form, _ := c.str()
		if p := textProblem(raw); p != "" {
			return &PathError{Path: path, Msg: fmt.Sprintf("member name %q: %s", raw, p)}
		}
		name := string(raw)
		if form == escapedText {
			quoted := c.b[c.i-len(raw)-2 : c.i]
			if err := json.Unmarshal(quoted, &name); err != nil {
				return &PathError{Path: path, Msg: fmt.Sprintf("member name %s: %v", quoted, err)}
			}
		}
		if seen[name] {
			return &PathError{Path: join(path, name), Msg: duplicateMsg}
		}
		seen[name] = true
		c.space()
		c.i++ // ':'
		if err := c.value(join(path, name)); err != nil {
			return err
		}
		c.space()
		if c.b[c.i] == ',' {
			c.i++
		}
	}
}

func (c *textChecker) array(path string) error {
	c.i++ // '['
	for n := 0; ; n++ {
		c.space()
		if c.b[c.i] == ']' {
			c.i++
			return nil
		}
		if err := c.value(fmt.Sprintf("%s[%d]", path, n)); err != nil {
			return err
		}
		c.space()
		if c.b[c.i] == ',' {
			c.i++
		}
	}
}

// textProblem says what keeps the raw content of a JSON string from being
// Unicode text, or "" if nothing does: a byte that is not UTF-8, or an
// escaped surrogate that is not half of a pair. Other mistakes, such as a
// malformed escape, are the JSON parser's to report.
func textProblem(raw []byte) string {
	for i := 0; i < len(raw); {
		switch c := raw[i]; {
		case c == '\\' && i+1 < len(raw) && raw[i+1] == 'u':
			r, ok := hex4(raw, i+2)
			switch {
			case !ok:
				i += 2
				continue
			case 0xD800 <= r && r < 0xDC00:
				if lo, ok := hex4(raw, i+8); ok && raw[i+6] == '\\' && raw[i+7] == 'u' && 0xDC00 <= lo && lo < 0xE000 {
					i += 12
					continue
				}
				return fmt.Sprintf(`lone surrogate \u%04x`, r)
			case 0xDC00 <= r && r < 0xE000:
				return fmt.Sprintf(`lone surrogate \u%04x`, r)
			}
			i += 6
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, n := utf8.DecodeRune(raw[i:])
			if r == utf8.RuneError && n == 1 {
				return fmt.Sprintf("invalid UTF-8 (byte %#x)", c)
			}
			i += n
		}
	}
	return ""
}

// hex4 reads the four hex digits at b[i:], if there are four.
func hex4(b []byte, i int) (r rune, ok bool) {
	if i < 0 || len(b)-i < 4 {
		return 0, false
	}
	for _, c := range b[i : i+4] {
		switch {
		case '0' <= c && c <= '9':
			r = r<<4 | rune(c-'0')
		case 'a' <= c && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case 'A' <= c && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

// memberSet holds the names met so far in one object, as places in the
// document: the first few in an array, so that a common object costs no
// allocation, then the hashes of all in a map. Two names of one hash are
// taken for a duplicate; if they are not (a chance of 2⁻⁶⁴ for names
// chosen without knowing the seed), knownKeys merely answers false.
type memberSet struct {
	n     int
	small [8][2]int // from, to
	seed  maphash.Seed
	more  map[uint64]struct{}
}

// add adds the name doc[from:to], reporting false if it was there
// already. Names are compared as written, so the caller must not add
// names with escapes.
func (m *memberSet) add(doc []byte, from, to int) bool {
	name := doc[from:to]
	if m.more != nil {
		return m.addHash(name)
	}
	for _, r := range m.small[:m.n] {
		if string(doc[r[0]:r[1]]) == string(name) {
			return false
		}
	}
	if m.n < len(m.small) {
		m.small[m.n] = [2]int{from, to}
		m.n++
		return true
	}
	m.seed = maphash.MakeSeed()
	m.more = make(map[uint64]struct{}, 4*len(m.small))
	for _, r := range m.small {
		m.addHash(doc[r[0]:r[1]])
	}
	return m.addHash(name)
}

func (m *memberSet) addHash(name []byte) bool {
	h := maphash.Bytes(m.seed, name)
	if _, dup := m.more[h]; dup {
		return false
	}
	m.more[h] = struct{}{}
	return true
}
