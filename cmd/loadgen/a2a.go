package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
)

// The A2A JSON-RPC protocol (-proto a2a): send mode calls SendMessage and
// stream mode SendStreamingMessage on /agents/{agent}/jsonrpc, protocol
// version 1.0, with the same message texts as the REST modes. A delta is
// an artifact update carrying text (the empty last chunk that closes an
// answer is not one); a stream ends at its completed status update.

// a2aSendBody is SendMessage's request; every call opens a conversation,
// so one message id serves them all.
var a2aSendBody = []byte(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":` +
	`{"messageId":"loadgen","role":"ROLE_USER","parts":[{"text":"hello world"}]}}}`)

// a2aCompleted is what a completed task's JSON contains.
var a2aCompleted = []byte(`"TASK_STATE_COMPLETED"`)

// a2aURL is the agent's JSON-RPC endpoint.
func a2aURL(cfg config) string { return cfg.target + "/agents/" + cfg.agent + "/jsonrpc" }

// a2aRequest is a JSON-RPC POST of body, version 1.0.
func a2aRequest(ctx context.Context, cfg config, body []byte) (*http.Request, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, a2aURL(cfg), bytes.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
	}
	return req, err
}

// a2aStreamBody is SendStreamingMessage's request for text.
func a2aStreamBody(text string) []byte {
	q, _ := json.Marshal(text) // a string always encodes
	return []byte(`{"jsonrpc":"2.0","id":1,"method":"SendStreamingMessage","params":{"message":` +
		`{"messageId":"loadgen","role":"ROLE_USER","parts":[{"text":` + string(q) + `}]}}}`)
}

var (
	artifactUpdate = []byte(`"artifactUpdate"`)
	emptyText      = []byte(`"parts":[{"text":""}]`)
	statusUpdate   = []byte(`"statusUpdate"`)
	rpcError       = []byte(`"error":`)
)

// a2aEventType names an A2A stream item as loadgen counts it: "delta" for
// an artifact update with text, "run.end" for the completed status
// update, "error" for a JSON-RPC error, "" for the rest.
func a2aEventType(data []byte) string {
	switch {
	case bytes.Contains(data, artifactUpdate):
		if bytes.Contains(data, emptyText) {
			return ""
		}
		return "delta"
	case bytes.Contains(data, statusUpdate) && bytes.Contains(data, a2aCompleted):
		return "run.end"
	case bytes.HasPrefix(data, []byte(`{"jsonrpc"`)) && bytes.Contains(data, rpcError) && !bytes.Contains(data, []byte(`"result"`)):
		return "error"
	}
	return ""
}

// protoName is -proto as results show it.
func protoName(cfg config) string {
	if cfg.proto == "" {
		return "rest"
	}
	return strings.ToLower(cfg.proto)
}
