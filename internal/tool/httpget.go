package tool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"agentd/internal/errdefs"
	"agentd/internal/netguard"
)

// HTTPGetName is the name the HTTP GET tool registers under.
const HTTPGetName = "http_get"

// Defaults of HTTPGetOptions.
const (
	DefaultHTTPGetMaxBytes = 1 << 20
	DefaultHTTPGetTimeout  = 10 * time.Second
	maxRedirects           = 5
)

const httpGetSchema = `{
  "type": "object",
  "properties": {
    "url": {
      "type": "string",
      "description": "Absolute http or https URL of a text resource on an allowed host.",
      "maxLength": 2048
    }
  },
  "required": ["url"],
  "additionalProperties": false
}`

// HTTPGetOptions configures the HTTP GET tool.
type HTTPGetOptions struct {
	// AllowHosts lists the hosts the tool may fetch from: exact names
	// ("api.example.com") or subdomain wildcards ("*.example.com", which
	// does not match example.com itself). Empty allows nothing.
	AllowHosts []string
	// MaxBytes caps the body read; longer bodies are truncated and say so.
	// Zero means DefaultHTTPGetMaxBytes.
	MaxBytes int64
	// Timeout bounds the whole request, body included. Zero means
	// DefaultHTTPGetTimeout.
	Timeout time.Duration
	// AllowPrivate permits loopback, private, link-local and unspecified
	// addresses, which are otherwise refused after DNS resolution so an
	// allowed name cannot be pointed at the internal network.
	AllowPrivate bool
}

// HTTPGet returns the http_get tool: it fetches a text resource from an
// allow-listed host, over a connection that refuses private addresses
// (unless allowed), with a size limit and a timeout. Redirects are followed
// only to allowed hosts. Connections are not kept alive, so the tool holds
// no background goroutines between calls.
func HTTPGet(opts HTTPGetOptions) Tool {
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = DefaultHTTPGetMaxBytes
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultHTTPGetTimeout
	}
	g := &httpGetter{opts: opts}
	dialer := &net.Dialer{Timeout: opts.Timeout, Control: g.checkAddress}
	g.client = &http.Client{
		Timeout: opts.Timeout,
		Transport: &http.Transport{
			Proxy:               nil, // a proxy would hide the address the dialer checks
			DialContext:         dialer.DialContext,
			DisableKeepAlives:   true,
			TLSHandshakeTimeout: opts.Timeout,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) >= maxRedirects {
				return errdefs.Validationf("stopped after %d redirects", maxRedirects)
			}
			return g.checkURL(req.URL)
		},
	}
	spec := Spec{
		Name:        HTTPGetName,
		Description: "Fetch a web page or API response (text) with HTTP GET. Only some hosts are allowed: " + g.allowed() + ".",
		Parameters:  json.RawMessage(httpGetSchema),
		Flags:       Flags{ParallelSafe: true, Idempotent: true},
	}
	type args struct {
		URL string `json:"url"`
	}
	return Typed(spec, func(ctx context.Context, a args) (Result, error) { return g.get(ctx, a.URL) })
}

type httpGetter struct {
	opts   HTTPGetOptions
	client *http.Client
}

func (g *httpGetter) get(ctx context.Context, rawURL string) (Result, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return Result{}, errdefs.Validationf("url %q: %w", rawURL, err)
	}
	if err := g.checkURL(u); err != nil {
		return Result{}, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Result{}, errdefs.Validationf("url %q: %w", rawURL, err)
	}
	req.Header.Set("User-Agent", "agentd-http_get")
	resp, err := g.client.Do(req)
	if err != nil {
		return Result{}, classifyFetchError(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// The model's own URL and the status it got: fit to read.
		return Result{}, errdefs.Public(errdefs.NotAvailablef("GET %s: %s", u.Redacted(), resp.Status))
	}
	mediaType, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !textual(mediaType) {
		return Result{}, errdefs.Validationf("GET %s: content type %q is not text", u.Redacted(), mediaType)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, g.opts.MaxBytes+1))
	if err != nil {
		return Result{}, classifyFetchError(fmt.Errorf("read body: %w", err))
	}
	truncated := int64(len(body)) > g.opts.MaxBytes
	if truncated {
		body = body[:g.opts.MaxBytes]
	}
	content := strings.ToValidUTF8(string(body), string(utf8.RuneError))
	if truncated {
		content += fmt.Sprintf("\n[truncated at %d bytes]", g.opts.MaxBytes)
	}
	data, err := json.Marshal(struct {
		URL         string `json:"url"`
		Status      int    `json:"status"`
		ContentType string `json:"content_type"`
		Truncated   bool   `json:"truncated,omitempty"`
	}{resp.Request.URL.Redacted(), resp.StatusCode, mediaType, truncated})
	if err != nil {
		return Result{}, fmt.Errorf("encode result: %w", err)
	}
	return Result{Content: content, Data: data}, nil
}

// checkURL admits http(s) URLs whose host is on the allow-list.
func (g *httpGetter) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return errdefs.Validationf("url %q: scheme must be http or https", u.Redacted())
	}
	host := strings.ToLower(u.Hostname())
	if host == "" {
		return errdefs.Validationf("url %q: no host", u.Redacted())
	}
	for _, pattern := range g.opts.AllowHosts {
		pattern = strings.ToLower(pattern)
		if host == pattern || strings.HasPrefix(pattern, "*.") && strings.HasSuffix(host, pattern[1:]) {
			return nil
		}
	}
	return errdefs.Forbiddenf("host %q is not allowed (allowed: %s)", host, g.allowed())
}

func (g *httpGetter) allowed() string {
	if len(g.opts.AllowHosts) == 0 {
		return "none"
	}
	return strings.Join(g.opts.AllowHosts, ", ")
}

// checkAddress runs after DNS resolution, on the address actually dialled,
// so neither a DNS answer nor a redirect can reach the internal network.
func (g *httpGetter) checkAddress(network, address string, c syscall.RawConn) error {
	if g.opts.AllowPrivate {
		return nil
	}
	return netguard.CheckAddress(network, address, c)
}

// classifyFetchError keeps a class already set by our checks and marks the
// remaining failures: timeouts as Timeout, anything else as NotAvailable.
func classifyFetchError(err error) error {
	if errdefs.ClassOf(err) != errdefs.ClassInternal {
		return err
	}
	if ne, ok := errors.AsType[net.Error](err); ok && ne.Timeout() {
		return errdefs.Timeout(err)
	}
	return errdefs.NotAvailable(err)
}

// textual reports whether a media type is something a model can read.
func textual(mediaType string) bool {
	switch {
	case mediaType == "", strings.HasPrefix(mediaType, "text/"):
		return true
	case strings.HasSuffix(mediaType, "+json"), strings.HasSuffix(mediaType, "+xml"):
		return true
	}
	switch mediaType {
	case "application/json", "application/xml", "application/javascript", "application/x-ndjson", "application/yaml":
		return true
	}
	return false
}
