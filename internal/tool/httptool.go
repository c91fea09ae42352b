package tool

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/netguard"
)

// IdempotencyKeyHeader carries a call's effect key to an HTTP tool's
// service, as the IETF idempotency-key draft and most payment APIs name it.
const IdempotencyKeyHeader = "Idempotency-Key"

// HTTPToolOptions configures an HTTP tool: a call sends its arguments, a
// JSON object, to URL, with the call's effect key as Idempotency-Key.
type HTTPToolOptions struct {
	Name        string
	Description string
	// Method is POST (default), PUT, PATCH, DELETE or GET; a GET sends the
	// arguments as query parameters.
	Method string
	URL    string
	// Schema is the JSON Schema of the arguments (default: any object).
	Schema json.RawMessage
	// Effects defaults to none for a GET and unsafe otherwise: a service
	// that honours Idempotency-Key is declared keyed.
	Effects Effects
	// StatusURL, when set, is the reconcile call for a call in doubt: a
	// GET where "{key}" is replaced by the effect key (also sent as
	// Idempotency-Key). 2xx: the effect happened, the body is its result;
	// 404: it did not; anything else leaves the call in doubt.
	StatusURL string
	// Timeout bounds one request (default 10s).
	Timeout time.Duration
	// AllowPrivate permits loopback and private addresses.
	AllowPrivate bool
	// MaxBytes caps a response body (default 1 MiB).
	MaxBytes int64
}

// httpTool is a configured HTTP tool.
type httpTool struct {
	opts   HTTPToolOptions
	spec   Spec
	client *http.Client
}

var _ Reconciler = (*httpTool)(nil)

// NewHTTPTool validates opts and returns the tool. Errors name the field.
func NewHTTPTool(opts HTTPToolOptions) (Tool, error) {
	opts.Method = strings.ToUpper(opts.Method)
	if opts.Method == "" {
		opts.Method = http.MethodPost
	}
	switch opts.Method {
	case http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodGet:
	default:
		return nil, errdefs.Validationf("tool %q: method %q: want POST, PUT, PATCH, DELETE or GET", opts.Name, opts.Method)
	}
	if err := checkHTTPURL(opts.URL); err != nil {
		return nil, errdefs.Validationf("tool %q: url: %w", opts.Name, err)
	}
	if opts.StatusURL != "" {
		if err := checkHTTPURL(strings.ReplaceAll(opts.StatusURL, "{key}", "k")); err != nil {
			return nil, errdefs.Validationf("tool %q: status_url: %w", opts.Name, err)
		}
	}
	if opts.Effects == "" {
		opts.Effects = EffectsUnsafe
		if opts.Method == http.MethodGet {
			opts.Effects = EffectsNone
		}
	}
	if err := opts.Effects.Validate(); err != nil {
		return nil, errdefs.Validationf("tool %q: %w", opts.Name, err)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultHTTPGetTimeout
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultHTTPGetMaxBytes
	}
	schema := opts.Schema
	if len(schema) == 0 {
		schema = json.RawMessage(`{"type":"object"}`)
	}
	desc := opts.Description
	if desc == "" {
		desc = opts.Method + " to " + opts.URL
	}
	return &httpTool{
		opts: opts,
		spec: Spec{Name: opts.Name, Description: desc, Parameters: schema, Flags: Flags{Effects: opts.Effects}},
		client: &http.Client{Timeout: opts.Timeout, Transport: &http.Transport{
			Proxy: nil, DialContext: netguard.Dialer(opts.Timeout, opts.AllowPrivate).DialContext,
		}},
	}, nil
}

func checkHTTPURL(raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("%q is not an absolute http or https URL", raw)
	}
	return nil
}

func (t *httpTool) Name() string            { return t.spec.Name }
func (t *httpTool) Description() string     { return t.spec.Description }
func (t *httpTool) Schema() json.RawMessage { return t.spec.Parameters }
func (t *httpTool) Flags() Flags            { return t.spec.Flags }

// Reconciles reports whether a status call is configured.
func (t *httpTool) Reconciles() bool { return t.opts.StatusURL != "" }

// Execute sends the call, with its effect key, and answers the body.
func (t *httpTool) Execute(ctx context.Context, args json.RawMessage) (Result, error) {
	call, _ := CallFromContext(ctx)
	target, body := t.opts.URL, io.Reader(bytes.NewReader(args))
	if t.opts.Method == http.MethodGet {
		q, err := queryOf(args)
		if err != nil {
			return Result{}, err
		}
		target, body = withQuery(target, q), nil
	}
	req, err := http.NewRequestWithContext(ctx, t.opts.Method, target, body)
	if err != nil {
		return Result{}, errdefs.Validationf("%s %s: %w", t.opts.Method, t.opts.Name, err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	status, text, err := t.do(req, call.IdempotencyKey)
	if err != nil {
		return Result{}, err
	}
	if status < 200 || status > 299 {
		return Result{Content: fmt.Sprintf("%s: HTTP %d: %s", t.opts.Name, status, text), IsError: true}, nil
	}
	return Result{Content: text}, nil
}

// Reconcile asks the status URL whether the effect of ctx's call happened.
func (t *httpTool) Reconcile(ctx context.Context, call Call) (Result, bool, error) {
	if t.opts.StatusURL == "" {
		return Result{}, false, errdefs.Validationf("tool %q has no status_url to reconcile with", t.opts.Name)
	}
	target := strings.ReplaceAll(t.opts.StatusURL, "{key}", url.QueryEscape(call.IdempotencyKey))
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, target, nil)
	if err != nil {
		return Result{}, false, errdefs.Validationf("%s status: %w", t.opts.Name, err)
	}
	status, text, err := t.do(req, call.IdempotencyKey)
	switch {
	case err != nil:
		return Result{}, false, err
	case status == http.StatusNotFound:
		return Result{}, false, nil
	case status >= 200 && status <= 299:
		return Result{Content: text}, true, nil
	}
	return Result{}, false, errdefs.NotAvailablef("%s status: HTTP %d", t.opts.Name, status)
}

// do sends req with key and reads at most MaxBytes of the answer.
func (t *httpTool) do(req *http.Request, key string) (int, string, error) {
	if key != "" {
		req.Header.Set(IdempotencyKeyHeader, key)
	}
	req.Header.Set("User-Agent", "agentd-http-tool")
	resp, err := t.client.Do(req)
	if err != nil {
		return 0, "", classifyFetchError(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, t.opts.MaxBytes))
	if err != nil {
		return 0, "", classifyFetchError(fmt.Errorf("read body: %w", err))
	}
	return resp.StatusCode, string(b), nil
}

// queryOf turns an arguments object into query parameters (strings as
// they are, other values as JSON).
func queryOf(args json.RawMessage) (url.Values, error) {
	var obj map[string]json.RawMessage
	if len(bytes.TrimSpace(args)) > 0 {
		if err := json.Unmarshal(args, &obj); err != nil {
			return nil, errdefs.Validationf("arguments: not a JSON object")
		}
	}
	q := url.Values{}
	for k, v := range obj {
		var s string
		if json.Unmarshal(v, &s) != nil {
			s = string(v)
		}
		q.Set(k, s)
	}
	return q, nil
}

func withQuery(target string, q url.Values) string {
	if len(q) == 0 {
		return target
	}
	sep := "?"
	if strings.Contains(target, "?") {
		sep = "&"
	}
	return target + sep + q.Encode()
}
