package loop

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"time"

	"agentd/internal/model"
)

// MetadataPartial is the metadata key that marks an assistant message cut
// short (interrupt, cancellation, provider failure): its text is what was
// streamed before the turn stopped, and its tool calls were never run.
const MetadataPartial = "partial"

// newUUIDv7 returns a random, time-ordered RFC 9562 version 7 UUID, the
// id format agentd uses everywhere (DESIGN §2), without a dependency.
func newUUIDv7() string {
	var u [16]byte
	_, _ = rand.Read(u[6:]) // crypto/rand.Read never fails (Go 1.24+)
	binary.BigEndian.PutUint64(u[:8], uint64(time.Now().UnixMilli())<<16|binary.BigEndian.Uint64(u[:8])&0xffff)
	u[6] = u[6]&0x0f | 0x70 // version 7
	u[8] = u[8]&0x3f | 0x80 // variant 10
	var b [36]byte
	hex.Encode(b[0:8], u[0:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return string(b[:])
}

// answered reports whether msgs end with a complete final answer: an
// assistant message without tool calls that was not cut short. A resume
// from such a board has nothing left to do.
func answered(msgs []model.Message) bool {
	if len(msgs) == 0 {
		return false
	}
	last := msgs[len(msgs)-1]
	if last.Role != model.RoleAssistant || len(last.ToolCalls()) > 0 {
		return false
	}
	partial, _ := last.Metadata[MetadataPartial].(bool)
	return !partial
}

// toolMessage is the role-tool message that carries one call's result.
func toolMessage(r model.ToolResult) model.Message {
	return model.Message{Role: model.RoleTool, Name: r.Name, Parts: []model.Part{model.ToolResultPart(r)}}
}
