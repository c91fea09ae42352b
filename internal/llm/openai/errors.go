package openai

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"agentd/internal/errdefs"
)

// apiError is the error a server reports, in any of the shapes seen in
// the wild: {"error":{"message","type","code"}} (OpenAI, llama.cpp),
// {"error":"text"} (Ollama), {"object":"error","message",…} (vLLM),
// {"detail":…} (FastAPI-based servers) or plain text.
type apiError struct {
	Message string
	Type    string
	Code    string
}

type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
	Detail  json.RawMessage `json:"detail"`
}

type errorObject struct {
	Message string          `json:"message"`
	Type    string          `json:"type"`
	Code    json.RawMessage `json:"code"`
}

func parseAPIError(body []byte) apiError {
	var b errorBody
	if json.Unmarshal(body, &b) != nil {
		return apiError{Message: truncate(strings.TrimSpace(string(body)))}
	}
	if e, ok := decodeErrorField(b.Error); ok {
		return e
	}
	if b.Object == "error" || b.Message != "" {
		return apiError{Message: b.Message, Type: b.Type, Code: scalar(b.Code)}
	}
	if len(b.Detail) > 0 {
		return apiError{Message: truncate(scalar(b.Detail))}
	}
	return apiError{Message: truncate(strings.TrimSpace(string(body)))}
}

// decodeErrorField reads an "error" member that is an object or a string.
func decodeErrorField(raw json.RawMessage) (apiError, bool) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || string(raw) == "null" {
		return apiError{}, false
	}
	var o errorObject
	if json.Unmarshal(raw, &o) == nil {
		return apiError{Message: o.Message, Type: o.Type, Code: scalar(o.Code)}, true
	}
	return apiError{Message: scalar(raw)}, true
}

// scalar renders a JSON string without quotes and anything else as JSON.
func scalar(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	if string(raw) == "null" {
		return ""
	}
	return string(raw)
}

func truncate(s string) string {
	const limit = 512
	if len(s) > limit {
		return s[:limit] + "…"
	}
	return s
}

func (e apiError) String() string {
	if e.Message == "" {
		return "(no message)"
	}
	return e.Message
}

// retryHint says whether and when a failed attempt may be retried.
type retryHint struct {
	retry bool
	after time.Duration // server-requested wait; 0 means use the backoff
}

// statusError classifies a non-200 answer.
func statusError(url, model string, status int, h http.Header, body []byte) (retryHint, error) {
	e := parseAPIError(body)
	head := fmt.Sprintf("openai: POST %s: %d %s", url, status, http.StatusText(status))
	after := retryAfter(h, time.Now())
	switch {
	case status == http.StatusUnauthorized:
		return retryHint{}, errdefs.Unauthorizedf("%s (check the API key): %s", head, e)
	case status == http.StatusForbidden:
		return retryHint{}, errdefs.Forbiddenf("%s: %s", head, e)
	case status == http.StatusNotFound:
		return retryHint{}, errdefs.NotFoundf("%s: model %q not found, or the URL is wrong: %s", head, model, e)
	case status == http.StatusRequestTimeout:
		return retryHint{retry: true, after: after}, errdefs.Timeoutf("%s: %s", head, e)
	case status == http.StatusConflict:
		return retryHint{retry: true, after: after}, errdefs.Conflictf("%s: %s", head, e)
	case status == http.StatusTooManyRequests && e.Code == "insufficient_quota":
		// Out of credit: waiting does not help.
		return retryHint{}, errdefs.BudgetExceededf("%s: %s", head, e)
	case status == http.StatusTooManyRequests:
		return retryHint{retry: true, after: after}, errdefs.RateLimitf("%s: %s", head, e)
	case status >= 500:
		return retryHint{retry: true, after: after}, errdefs.NotAvailablef("%s: %s", head, e)
	default:
		return retryHint{}, errdefs.Validationf("%s: %s", head, e)
	}
}

// streamError classifies an error a server sends inside the stream.
func streamError(url string, e apiError) error {
	msg := fmt.Sprintf("openai: stream from %s failed: %s", url, e)
	switch {
	case e.Code == "rate_limit_exceeded" || e.Type == "rate_limit_error":
		return errdefs.RateLimitf("%s", msg)
	case e.Type == "invalid_request_error" || e.Code == "context_length_exceeded" || e.Code == "400":
		return errdefs.Validationf("%s", msg)
	default:
		return errdefs.NotAvailablef("%s", msg)
	}
}

// retryAfter reads the server's requested wait: OpenAI's retry-after-ms,
// else Retry-After as seconds or an HTTP date. 0 means none.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if v := h.Get("Retry-After-Ms"); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms > 0 {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseFloat(v, 64); err == nil {
		if s <= 0 {
			return 0
		}
		return time.Duration(s * float64(time.Second))
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}
