package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"agentd/internal/model"
)

// appendRunView appends v's JSON exactly as encoding/json writes it
// (without the Encoder's newline). When it returns an error, the output is
// to be discarded and encoding/json used instead: it fails the same way.
func appendRunView(dst []byte, v *RunView) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = model.AppendJSONString(dst, v.ID)
	dst = append(dst, `,"context_id":`...)
	dst = model.AppendJSONString(dst, v.ContextID)
	dst = append(dst, `,"agent_id":`...)
	dst = model.AppendJSONString(dst, v.AgentID)
	dst = append(dst, `,"status":`...)
	dst = model.AppendJSONString(dst, string(v.Status))
	if v.StatusMessage != nil {
		dst = append(dst, `,"status_message":`...)
		if dst, err = v.StatusMessage.AppendJSON(dst); err != nil {
			return dst, err
		}
	}
	if len(v.Messages) > 0 {
		dst = append(dst, `,"messages":[`...)
		for i := range v.Messages {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = v.Messages[i].AppendJSON(dst); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	if len(v.Artifacts) > 0 {
		dst = append(dst, `,"artifacts":[`...)
		for i := range v.Artifacts {
			if i > 0 {
				dst = append(dst, ',')
			}
			if dst, err = v.Artifacts[i].AppendJSON(dst); err != nil {
				return dst, err
			}
		}
		dst = append(dst, ']')
	}
	dst = append(dst, `,"usage":`...)
	dst = v.Usage.AppendJSON(dst)
	if e := v.Error; e != nil {
		dst = append(dst, `,"error":{"class":`...)
		dst = model.AppendJSONString(dst, e.Class)
		dst = append(dst, `,"message":`...)
		dst = model.AppendJSONString(dst, e.Message)
		dst = append(dst, '}')
	} else {
		dst = append(dst, `,"error":null`...)
	}
	dst = append(dst, `,"attempt":`...)
	dst = strconv.AppendInt(dst, int64(v.Attempt), 10)
	if len(v.Metadata) > 0 {
		b, err := json.Marshal(v.Metadata)
		if err != nil {
			return dst, err
		}
		dst = append(dst, `,"metadata":`...)
		dst = append(dst, b...)
	}
	dst = append(dst, `,"created_at":`...)
	if dst, err = model.AppendJSONTime(dst, v.CreatedAt); err != nil {
		return dst, err
	}
	dst = append(dst, `,"updated_at":`...)
	if dst, err = model.AppendJSONTime(dst, v.UpdatedAt); err != nil {
		return dst, err
	}
	return append(dst, '}'), nil
}

// writeRunView answers v with status, the bytes writeJSON would write.
func writeRunView(w http.ResponseWriter, status int, v *RunView) {
	buf := getBuffer()
	defer putBuffer(buf)
	b, err := appendRunView(buf.b[:0], v)
	if err != nil {
		writeJSON(w, status, *v) // a copy, so that v stays on the caller's stack
		return
	}
	b = append(b, '\n')
	buf.b = b
	w.Header()["Content-Type"] = jsonContentType
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// buffer is a reusable byte slice for request bodies and answers.
type buffer struct{ b []byte }

// maxPooledBuffer keeps one huge body or answer from pinning its memory.
const maxPooledBuffer = 64 << 10

var bufferPool = sync.Pool{New: func() any { return &buffer{b: make([]byte, 0, 2048)} }}

func getBuffer() *buffer { return bufferPool.Get().(*buffer) }

// putBuffer returns buf to the pool; nothing may use its bytes afterwards.
func putBuffer(buf *buffer) {
	if cap(buf.b) <= maxPooledBuffer {
		buf.b = buf.b[:0]
		bufferPool.Put(buf)
	}
}

// jsonContentType is the Content-Type value of JSON answers, shared by
// every answer rather than allocated for each; neither agentd nor
// net/http modifies a header value in place.
var jsonContentType = []string{"application/json"}
