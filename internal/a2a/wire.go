package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/errordetails"

	"agentd/internal/errdefs"
)

// callInfo is what the binding wrapper learned about a request before the
// SDK transport decoded it: the transport types have no room for the
// resume cursor, and the handler needs the response (for a controller) to
// lift the write deadline of a stream.
type callInfo struct {
	w        http.ResponseWriter // the server's, not the deferredWriter
	req      *http.Request       // for the extended card's URLs
	after    int64
	hasAfter bool
	afterErr error
	// flush is shared with the response's deferredWriter.
	flush batchFlush
}

type callInfoKey struct{}

func withCallInfo(ctx context.Context, ci *callInfo) context.Context {
	return context.WithValue(ctx, callInfoKey{}, ci)
}

func callInfoFrom(ctx context.Context) *callInfo {
	if ci, ok := ctx.Value(callInfoKey{}).(*callInfo); ok {
		return ci
	}
	return &callInfo{}
}

// openStream lifts the write deadline for the rest of the response: a
// stream outlives any server WriteTimeout (a2a-go's SSE writer leaves it).
func openStream(ctx context.Context) {
	if w := callInfoFrom(ctx).w; w != nil {
		_ = http.NewResponseController(w).SetWriteDeadline(time.Time{})
	}
}

// readBody reads a request body of at most limit bytes. A larger body is
// reported as errBodyTooLarge so the caller can answer 413 before anything
// is decoded.
func readBody(r *http.Request, limit int64) ([]byte, error) {
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	defer r.Body.Close()
	b, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, errBodyTooLarge
	}
	return b, nil
}

var errBodyTooLarge = errors.New("request body too large")

// jsonrpcError writes a JSON-RPC error response the SDK transports could
// not produce themselves (version, size, routing). id is echoed when the
// body names one.
func jsonrpcError(w http.ResponseWriter, status int, body []byte, code error, msg string) {
	var env struct {
		ID any `json:"id"`
	}
	_ = json.Unmarshal(body, &env)
	info := errordetails.NewErrorInfo(a2a.ErrorReason(code), a2a.ProtocolDomain, nil)
	out, _ := json.Marshal(map[string]any{
		"jsonrpc": "2.0", "id": env.ID,
		"error": map[string]any{"code": jsonrpcCode(code), "message": msg, "data": []*errordetails.Typed{info}},
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(out, '\n'))
}

func jsonrpcCode(err error) int {
	switch err {
	case a2a.ErrVersionNotSupported:
		return -32009
	case a2a.ErrInvalidRequest:
		return -32600
	case a2a.ErrParseError:
		return -32700
	case a2a.ErrMethodNotFound:
		return -32601
	}
	return -32603
}

// restError writes an HTTP+JSON error in the google.rpc.Status shape the
// SDK transports use.
func restError(w http.ResponseWriter, status int, grpcStatus string, code error, msg string) {
	info := errordetails.NewErrorInfo(a2a.ErrorReason(code), a2a.ProtocolDomain, nil)
	out, _ := json.Marshal(map[string]any{"error": map[string]any{
		"code": status, "status": grpcStatus, "message": msg, "details": []*errordetails.Typed{info},
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(append(out, '\n'))
}

// deferredWriter holds back the start of an SSE response until its first
// flush. If the first event is an error, the response becomes a plain JSON
// error instead of a stream: A2A wants errors found before a stream starts
// (unknown task, terminal task, bad params) as direct errors, while the SDK
// transports commit to text/event-stream before the handler runs. Every
// other response passes straight through.
type deferredWriter struct {
	http.ResponseWriter
	rest bool // HTTP+JSON binding: the error's HTTP status is its code
	// a2aJSON labels JSON answers application/a2a+json (the v1.0
	// HTTP+JSON binding's type, for clients that accept it).
	a2aJSON bool
	// sse says the response is an event stream; idHeld that the SDK's
	// "id:" line of the event being written was held back (see Write).
	sse, idHeld bool
	mode        writerMode
	status      int
	buf         []byte
	// flush says when a stream's flush may wait (see batchFlush); written
	// counts the SSE events written, keepAlive that a keep-alive comment
	// was written since the last flush (it always goes out).
	flush     *batchFlush
	written   int64
	keepAlive bool
	idBuf     []byte // the id line being written, reused
}

type writerMode uint8

const (
	modeUndecided writerMode = iota
	modePass
	modeHolding
	modeHoldingError
	modeDiscard
)

func (d *deferredWriter) WriteHeader(code int) {
	if d.mode == modeUndecided && code == http.StatusOK && strings.HasPrefix(d.Header().Get("Content-Type"), "text/event-stream") {
		d.mode, d.status, d.sse = modeHolding, code, true
		return
	}
	if d.mode == modeUndecided {
		// A plain response is held whole, to be mended when the handler
		// is done (see finish): it is small, and its error may need it.
		d.mode, d.status = modeHoldingError, code
		return
	}
	if d.mode == modePass {
		d.restContentType()
		d.ResponseWriter.WriteHeader(code)
	}
}

// restContentType relabels a2a-go's v0.3 HTTP+JSON errors: its server
// labels its google.rpc.Status errors application/problem+json, which they
// are not (RFC 9457 has other members) and which its own v0.3 client
// refuses to read; the body is plain JSON.
func (d *deferredWriter) restContentType() {
	if d.rest && d.Header().Get("Content-Type") == "application/problem+json" {
		d.Header().Set("Content-Type", "application/json")
	}
	if d.a2aJSON && strings.HasPrefix(d.Header().Get("Content-Type"), "application/json") {
		d.Header().Set("Content-Type", "application/a2a+json")
	}
}

func (d *deferredWriter) Write(p []byte) (int, error) {
	if d.sse {
		if sseEvent(p) {
			d.written++
		} else if len(p) > 0 && p[0] == ':' {
			d.keepAlive = true
		}
	}
	if d.sse && d.mode == modePass {
		return d.writeEvent(p)
	}
	switch d.mode {
	case modeHolding, modeHoldingError:
		d.buf = append(d.buf, p...)
		return len(p), nil
	case modeDiscard:
		return len(p), nil
	case modeUndecided:
		d.mode, d.status = modeHoldingError, http.StatusOK
		d.buf = append(d.buf, p...)
		return len(p), nil
	}
	return d.ResponseWriter.Write(p)
}

// pass commits to passing the response through. a2a-go's v0.3 JSON-RPC
// handler writes its errors without a Content-Type (net/http would sniff
// text/plain); every JSON-RPC response that is not a stream is JSON.
func (d *deferredWriter) pass() {
	d.mode = modePass
	if !d.rest && d.Header().Get("Content-Type") == "" {
		d.Header().Set("Content-Type", "application/json")
	}
}

// Flush commits a held stream (or turns it into an error) and flushes —
// in a stream, once the events of the batch in hand are written.
func (d *deferredWriter) Flush() {
	switch d.mode {
	case modeHolding:
		d.commit()
	case modeHoldingError, modeDiscard:
		return
	case modePass:
		if d.sse && !d.keepAlive && !d.flush.due(d.written) {
			return
		}
	}
	d.keepAlive = false
	if f, ok := d.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the connection.
func (d *deferredWriter) Unwrap() http.ResponseWriter { return d.ResponseWriter }

// finish commits whatever is still held when the handler returns.
func (d *deferredWriter) finish() {
	switch d.mode {
	case modeHolding:
		d.commit()
	case modeHoldingError:
		if d.Header().Get("Content-Type") == "" {
			d.pass() // sets the JSON-RPC Content-Type
		}
		status, body := d.status, plainDecodeErrors(d.buf)
		if d.rest && status == http.StatusInternalServerError {
			if b, ok := retryable(body); ok {
				status, body = http.StatusServiceUnavailable, append(b, '\n')
				d.Header().Set("Retry-After", errdefs.RetryAfterSeconds)
			}
		}
		d.mode, d.buf = modePass, nil
		d.restContentType()
		d.ResponseWriter.WriteHeader(status)
		_, _ = d.ResponseWriter.Write(body)
	}
}

func (d *deferredWriter) commit() {
	// JSON-RPC keeps an error found before the stream's first event in
	// the stream, as an SSE event carrying the JSON-RPC error: that is
	// where the spec and every official client look for it (a2a-go's
	// client reads a plain JSON answer to a streaming call as no events
	// and no error). HTTP+JSON says it with the HTTP status instead.
	if data := firstData(d.buf); data != nil && d.rest {
		if status, ok := errorPayload(data, d.rest); ok {
			if b, ok := retryable(data); ok && d.rest {
				status, data = http.StatusServiceUnavailable, b
			}
			h := d.Header()
			if status == http.StatusServiceUnavailable {
				h.Set("Retry-After", errdefs.RetryAfterSeconds)
			}
			h.Set("Content-Type", "application/json")
			h.Del("Cache-Control")
			h.Del("Connection")
			h.Del("X-Accel-Buffering")
			d.ResponseWriter.WriteHeader(status)
			_, _ = d.ResponseWriter.Write(append(data, '\n'))
			d.mode, d.buf = modeDiscard, nil
			return
		}
	}
	d.mode = modePass
	d.ResponseWriter.WriteHeader(d.status)
	_, _ = d.ResponseWriter.Write(seqIDs(d.buf))
	d.buf = nil
}

// writeEvent passes a live SSE write on with its event id made the run's
// event seq: the SDK writes each event as an "id: <random UUID>" line and
// then its "data:" block, so the id line is held until the data says the
// seq. A browser's EventSource then reconnects with a Last-Event-ID that
// SubscribeToTask honours as the resume cursor, instead of an id that
// means nothing.
func (d *deferredWriter) writeEvent(p []byte) (int, error) {
	if bytes.HasPrefix(p, []byte("id:")) && bytes.HasSuffix(p, []byte("\n")) && bytes.Count(p, []byte("\n")) == 1 {
		d.idHeld = true
		return len(p), nil
	}
	if d.idHeld && bytes.HasPrefix(p, []byte("data:")) {
		d.idHeld = false
		d.idBuf = appendIDLine(d.idBuf[:0], p)
		if _, err := d.ResponseWriter.Write(d.idBuf); err != nil {
			return 0, err
		}
	}
	return d.ResponseWriter.Write(p)
}

// seqIDs rewrites the id lines of whole SSE events in b (see writeEvent).
func seqIDs(b []byte) []byte {
	if !bytes.Contains(b, []byte("id:")) {
		return b
	}
	var out []byte
	lines := bytes.SplitAfter(b, []byte("\n"))
	for i, line := range lines {
		if bytes.HasPrefix(line, []byte("id:")) {
			if i+1 < len(lines) && bytes.HasPrefix(lines[i+1], []byte("data:")) {
				out = appendIDLine(out, lines[i+1])
			}
			continue
		}
		out = append(out, line...)
	}
	return out
}

// seqKey is how the extension's seq appears in an update's metadata.
var seqKey = []byte(`"` + MetaSeq + `":`)

// appendIDLine appends the "id: <seq>" line for an event whose data line
// is data, or nothing when the event carries no seq (the Task that opens a
// stream): the client's last event id then stays what it was.
func appendIDLine(dst, data []byte) []byte {
	i := bytes.Index(data, seqKey)
	if i < 0 {
		return dst
	}
	rest := data[i+len(seqKey):]
	n := 0
	for n < len(rest) && rest[n] >= '0' && rest[n] <= '9' {
		n++
	}
	if n == 0 {
		return dst
	}
	return append(append(append(dst, "id: "...), rest[:n]...), '\n')
}

// firstData returns the data of the first SSE event in b, or nil.
func firstData(b []byte) []byte {
	for len(b) > 0 {
		line := b
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			b = nil
		}
		if rest, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimPrefix(rest, []byte(" "))
		}
	}
	return nil
}

// errorPayload reports whether an SSE data payload is an error and the HTTP
// status to answer it with: 200 for JSON-RPC (errors travel in the body),
// the error's code for HTTP+JSON.
func errorPayload(data []byte, rest bool) (int, bool) {
	var env struct {
		Error *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	if json.Unmarshal(data, &env) != nil || env.Error == nil {
		return 0, false
	}
	if !rest {
		return http.StatusOK, true
	}
	if env.Error.Code < 400 || env.Error.Code > 599 {
		return http.StatusInternalServerError, true
	}
	return env.Error.Code, true
}

// retryable recognises an HTTP+JSON error body carrying a2a.ErrServerError —
// which agentd answers only for errdefs.ClassNotAvailable (a draining
// replica, a store outage; see toA2AError) — and returns it relabelled as
// what it is, 503 UNAVAILABLE: a2a-go maps every server error to 500
// INTERNAL, which tells clients and proxies nothing worth retrying.
func retryable(body []byte) ([]byte, bool) {
	var env struct {
		Error map[string]any `json:"error"`
	}
	if json.Unmarshal(body, &env) != nil || env.Error == nil {
		return nil, false
	}
	details, _ := env.Error["details"].([]any)
	for _, d := range details {
		if info, ok := d.(map[string]any); ok && info["reason"] == a2a.ErrorReason(a2a.ErrServerError) {
			env.Error["code"], env.Error["status"] = http.StatusServiceUnavailable, "UNAVAILABLE"
			out, err := json.Marshal(env)
			if err != nil {
				return nil, false
			}
			return out, true
		}
	}
	return nil, false
}

// goDecodeError matches encoding/json's type errors, which the SDK
// transports pass on to clients as they are: they name Go types
// ("cannot unmarshal string into Go struct field SendMessageRequest.message
// of type a2a.Message").
var goDecodeError = regexp.MustCompile(`json: cannot unmarshal (\w+) into Go (?:struct field (\S+)|value) of type (\S+)`)

// plainDecodeErrors rewrites such a message in an error response body in
// the request's terms ("message: expected an object, got a JSON string");
// any other body is returned as it is.
func plainDecodeErrors(body []byte) []byte {
	if !bytes.Contains(body, []byte("cannot unmarshal")) {
		return body
	}
	var doc map[string]any
	if json.Unmarshal(body, &doc) != nil {
		return body
	}
	e, _ := doc["error"].(map[string]any)
	msg, _ := e["message"].(string)
	if e == nil || !goDecodeError.MatchString(msg) {
		return body
	}
	e["message"] = goDecodeError.ReplaceAllStringFunc(msg, func(m string) string {
		g := goDecodeError.FindStringSubmatch(m)
		what := "expected " + jsonKind(g[3]) + ", got a JSON " + g[1]
		if _, field, ok := strings.Cut(g[2], "."); ok {
			return field + ": " + what
		}
		return what
	})
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return append(out, '\n')
}

// jsonKind names the JSON a Go type decodes from.
func jsonKind(goType string) string {
	switch {
	case strings.HasPrefix(goType, "[]"):
		return "an array"
	case goType == "string":
		return "a string"
	case goType == "bool":
		return "a boolean"
	case strings.HasPrefix(goType, "int"), strings.HasPrefix(goType, "uint"), strings.HasPrefix(goType, "float"):
		return "a number"
	}
	return "an object"
}
