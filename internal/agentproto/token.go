package agentproto

import (
	"bufio"
	"encoding/json"
)

// textDelta translates a token, read from its event without decoding the
// event (runtime.TokenLiterals): the hot path of every stream. The
// messages-tuple frame is the chunk's encoded prefix, the token's literal
// as the log holds it and the metadata encoded once per step, written to
// the stream piece by piece (tokenJSON); the token joins its message
// still encoded, decoded once when the message is read (aiBuild). The
// other modes take the general path.
func (t *translator) textDelta(out []frame, seq int64, actorLit, textLit []byte) []frame {
	actor, known := t.actorLits[string(actorLit)] // no allocation for a known actor
	if !known {
		if json.Unmarshal(actorLit, &actor) != nil {
			return out
		}
		t.actorLits[string(actorLit)] = actor
	}
	if !t.modes["messages-tuple"] {
		var text string
		if json.Unmarshal(textLit, &text) != nil {
			return out
		}
		return t.delta(out, seq, logData{Actor: actor, Text: text})
	}
	b := t.builder(actor, seq)
	if !b.addLiteral(textLit) {
		return out
	}
	if b.prefix == "" {
		b.prefix = chunkPrefix(b.id)
	}
	a := t.actor(actor)
	out = append(out, frame{event: a.tuple, data: tokenJSON{prefix: b.prefix, lit: textLit, meta: t.metaJSON(actor)}})
	if t.modes["messages"] || t.modes["events"] {
		var text string
		_ = json.Unmarshal(textLit, &text)
		out = t.otherTokenModes(out, actor, b, chunk(b.id, text, nil, 0))
	}
	return out
}

// tokenJSON is a token's messages-tuple frame, [chunk, metadata]: the
// chunk encoded up to its content (prefix), the token's JSON string
// literal, the encoded metadata. The stream writes the pieces as they are
// (writeTo); nothing is assembled per token.
type tokenJSON struct {
	prefix string
	lit    []byte
	meta   json.RawMessage
}

func (tk tokenJSON) writeTo(w *bufio.Writer) {
	w.WriteByte('[')
	w.WriteString(tk.prefix)
	w.Write(tk.lit)
	w.WriteString("},")
	w.Write(tk.meta)
	w.WriteByte(']')
}

// MarshalJSON is the frame's data in one piece (for tests and any reader
// other than the stream).
func (tk tokenJSON) MarshalJSON() ([]byte, error) {
	b := make([]byte, 0, len(tk.prefix)+len(tk.lit)+len(tk.meta)+4)
	b = append(append(append(b, '['), tk.prefix...), tk.lit...)
	return append(append(append(b, '}', ','), tk.meta...), ']'), nil
}

// addLiteral adds a token, a JSON string literal of the log, to the
// message still encoded: the bodies of valid literals (between their
// quotes) concatenate into the body of their concatenation, for an
// escape never spans two of them. It refuses what is not a string
// literal.
func (b *aiBuild) addLiteral(lit []byte) bool {
	if len(lit) < 2 || lit[0] != '"' || lit[len(lit)-1] != '"' {
		return false
	}
	if b.pending == nil {
		b.pending = append(make([]byte, 0, 256), '"')
	}
	b.pending = append(b.pending, lit[1:len(lit)-1]...)
	return true
}

// addText adds decoded text to the message, after what is pending.
func (b *aiBuild) addText(s string) {
	b.decodePending()
	b.text.WriteString(s)
}

// content is the message's text so far.
func (b *aiBuild) content() string {
	b.decodePending()
	return b.text.String()
}

// decodePending decodes the tokens added still encoded (once for all of
// them, by encoding/json) into the message's text.
func (b *aiBuild) decodePending() {
	if len(b.pending) <= 1 {
		return
	}
	var s string
	if json.Unmarshal(append(b.pending, '"'), &s) == nil {
		b.text.WriteString(s)
	}
	b.pending = b.pending[:1]
}
