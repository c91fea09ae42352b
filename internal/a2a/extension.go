package a2a

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/errdefs"
)

// ExtensionURI identifies agentd's resumable-stream extension; every card
// declares it under capabilities.extensions.
const ExtensionURI = "https://agentd.dev/a2a/ext/resumable-stream/v1"

// Metadata keys of the extension. MetaSeq is set on every status and
// artifact update: the seq of the run event it was translated from. MetaGap
// marks the status update that announces pruned events: its value is an
// object {"prunedThrough": n}.
const (
	MetaSeq = ExtensionURI + "#seq"
	MetaGap = ExtensionURI + "#gap"
)

// AfterSeqKey is the request metadata key (on SubscribeToTask, v0.3
// tasks/resubscribe, or the body of the HTTP+JSON subscribe) that asks for
// the events after a seq. A2A v1.0's SubscribeToTaskRequest has no metadata
// member, so the cursor may also travel as the service parameter (HTTP
// header) Last-Event-ID, which is what the v1.0 SDK clients can send.
const AfterSeqKey = "afterSeq"

// LastEventIDHeader is the service parameter that carries the same cursor.
const LastEventIDHeader = "Last-Event-ID"

func extensionDecl() a2a.AgentExtension {
	return a2a.AgentExtension{
		URI: ExtensionURI,
		Description: "Resumable streams: every status and artifact update carries the run's event seq in " +
			"metadata[\"" + MetaSeq + "\"]; SubscribeToTask with metadata.afterSeq = n (or the " +
			"Last-Event-ID header = n) sends the Task, then exactly the updates after n, then live ones; " +
			"pruned events are announced by a status update with metadata[\"" + MetaGap + "\"].",
		Params: map[string]any{"seqKey": MetaSeq, "gapKey": MetaGap, "afterSeqKey": AfterSeqKey, "header": LastEventIDHeader},
	}
}

// resumeCursor finds the afterSeq a subscribe request asks for: in the
// request body's params.metadata (JSON-RPC) or metadata (HTTP+JSON), in the
// afterSeq query parameter (HTTP+JSON GET), else in the Last-Event-ID
// header. ok is false when none is given. A header that is not a decimal seq
// (a browser replaying an SDK's random SSE id) is ignored; a malformed
// afterSeq in metadata or the query is an error.
func resumeCursor(body []byte, h http.Header, query string) (after int64, ok bool, err error) {
	if bytes.Contains(body, []byte(`"`+AfterSeqKey+`"`)) {
		var env struct {
			Params struct {
				Metadata map[string]json.RawMessage `json:"metadata"`
			} `json:"params"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		}
		if json.Unmarshal(body, &env) == nil {
			raw, found := env.Params.Metadata[AfterSeqKey]
			if !found {
				raw, found = env.Metadata[AfterSeqKey]
			}
			if found {
				return parseSeq(raw)
			}
		}
	}
	if query != "" {
		return parseSeq(json.RawMessage(strconv.Quote(query)))
	}
	if v := h.Get(LastEventIDHeader); v != "" {
		if n, perr := strconv.ParseInt(v, 10, 64); perr == nil && n >= 0 {
			return n, true, nil
		}
	}
	return 0, false, nil
}

// parseSeq accepts a non-negative integer given as a JSON number or a
// decimal string.
func parseSeq(raw json.RawMessage) (int64, bool, error) {
	var n json.Number
	if err := json.Unmarshal(raw, &n); err != nil {
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return 0, false, errdefs.Validationf("metadata.%s: want a non-negative integer, got %s", AfterSeqKey, raw)
		}
		n = json.Number(s)
	}
	v, err := n.Int64()
	if err != nil || v < 0 {
		return 0, false, errdefs.Validationf("metadata.%s: want a non-negative integer, got %s", AfterSeqKey, raw)
	}
	return v, true, nil
}
