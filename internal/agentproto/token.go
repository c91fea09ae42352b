package agentproto

import (
	"agentd/internal/runlog/jsonfast"
)

// textDelta translates a token, read from its event without decoding the
// event (jsonfast.TrailingStrings): the hot path of every stream. The
// messages-tuple frame is the chunk's encoded prefix, the token and the
// metadata encoded once per step; the other modes take the general path.
func (t *translator) textDelta(out []frame, seq int64, actorLit, textLit []byte) []frame {
	actor, known := t.actorLits[string(actorLit)] // no allocation for a known actor
	if !known {
		var ok bool
		if actor, ok = jsonfast.Unquote(actorLit); !ok {
			return out
		}
		t.actorLits[string(actorLit)] = actor
	}
	text, ok := jsonfast.Unquote(textLit)
	if !ok {
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
	buf := make([]byte, 0, len(b.prefix)+len(textLit)+len(meta)+4)
	buf = append(jsonfast.AppendObject(append(buf, '['), b.prefix, text), ',')
	buf = append(append(buf, meta...), ']')
	out = append(out, frame{event: "messages", data: encoded(buf)})
	if t.modes["messages"] || t.modes["events"] {
		out = t.otherTokenModes(out, actor, b, chunk(b.id, text, nil, 0))
	}
	return out
}
