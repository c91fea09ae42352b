package agentproto

import "encoding/json"

// textDelta translates a token, read from its event without decoding the
// event (runtime.TokenLiterals): the hot path of every stream. The
// messages-tuple frame is the chunk's encoded prefix, the token's literal
// as the log holds it and the metadata encoded once per step; the other
// modes take the general path.
func (t *translator) textDelta(out []frame, seq int64, actorLit, textLit []byte) []frame {
	actor, known := t.actorLits[string(actorLit)] // no allocation for a known actor
	if !known {
		if json.Unmarshal(actorLit, &actor) != nil {
			return out
		}
		t.actorLits[string(actorLit)] = actor
	}
	var text string
	if json.Unmarshal(textLit, &text) != nil {
		return out
	}
	if !t.modes["messages-tuple"] {
		return t.delta(out, seq, logData{Actor: actor, Text: text})
	}
	b := t.builder(actor, seq)
	b.text.WriteString(text)
	if b.prefix == "" {
		b.prefix = chunkPrefix(b.id)
	}
	meta := t.metaJSON(actor)
	buf := make([]byte, 0, len(b.prefix)+len(textLit)+len(meta)+5)
	buf = append(append(append(buf, '['), b.prefix...), textLit...) // the chunk, its content last
	buf = append(append(append(buf, '}', ','), meta...), ']')
	out = append(out, frame{event: t.actor(actor).tuple, data: encoded(buf)})
	if t.modes["messages"] || t.modes["events"] {
		out = t.otherTokenModes(out, actor, b, chunk(b.id, text, nil, 0))
	}
	return out
}
