package mcptool

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"sort"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// Separator joins a server's name and a tool's: "<server>__<tool>".
const Separator = "__"

// Server says how to reach one MCP server: Command (with Args and Env,
// added to agentd's environment) for stdio, or URL (with Headers) for
// streamable HTTP.
type Server struct {
	Name    string
	Command string
	Args    []string
	Env     map[string]string
	URL     string
	Headers map[string]string
	// HTTPClient reaches URL (nil: one that adds Headers).
	HTTPClient *http.Client
}

// Conn is a connected server and its tools. A session that ends (a stdio
// server that exited, a connection the SDK reports closed) is replaced by a
// new one on the next call, once per call: that call is sent on the new
// session. A call in flight when the session ends is not sent again — it
// may have run — and fails; the model reads the error. The tools are those
// listed at Connect.
type Conn struct {
	name   string
	server Server
	tools  []tool.Tool

	mu      sync.Mutex
	session *mcp.ClientSession
	gone    chan struct{} // closed when session has ended
	closed  bool
}

// Connect connects to s, lists its tools and adapts them. ctx bounds the
// connection and the listing, not the session.
func Connect(ctx context.Context, s Server) (*Conn, error) {
	session, err := dial(ctx, s)
	if err != nil {
		return nil, err
	}
	c := &Conn{name: s.Name, server: s, session: session, gone: watch(session)}
	if err := c.list(ctx); err != nil {
		_ = c.Close()
		return nil, err
	}
	return c, nil
}

// watch returns a channel closed when session ends. Its goroutine ends
// with the session (Close ends it).
func watch(session *mcp.ClientSession) chan struct{} {
	gone := make(chan struct{})
	go func() {
		_ = session.Wait()
		close(gone)
	}()
	return gone
}

// live returns the session to call on — the current one, or, when it has
// ended, a new one — and the channel closed when it ends.
func (c *Conn) live(ctx context.Context) (*mcp.ClientSession, chan struct{}, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.closed {
		return nil, nil, errdefs.NotAvailablef("mcp server %q: the connection was closed", c.name)
	}
	select {
	case <-c.gone:
		session, err := dial(ctx, c.server)
		if err != nil {
			return nil, nil, err
		}
		c.session, c.gone = session, watch(session)
	default:
	}
	return c.session, c.gone, nil
}

// call calls a tool on the live session. A session found closed when the
// call is sent (mcp.ErrConnectionClosed: the message never left) is
// ended, replaced, and the call sent once more on the new one; a call
// that was sent is never sent again, whatever became of it.
func (c *Conn) call(ctx context.Context, params *mcp.CallToolParams) (*mcp.CallToolResult, error) {
	session, gone, err := c.live(ctx)
	if err != nil {
		return nil, err
	}
	res, err := session.CallTool(ctx, params)
	if !errors.Is(err, mcp.ErrConnectionClosed) {
		return res, err
	}
	_ = session.Close()
	<-gone // live reconnects now
	if session, _, err = c.live(ctx); err != nil {
		return nil, err
	}
	return session.CallTool(ctx, params)
}

// dial opens a session with s.
func dial(ctx context.Context, s Server) (*mcp.ClientSession, error) {
	var t mcp.Transport
	switch {
	case s.Command != "" && s.URL != "":
		return nil, errdefs.Validationf("mcp server %q: give command or url, not both", s.Name)
	case s.Command != "":
		cmd := exec.Command(s.Command, s.Args...)
		cmd.Env = os.Environ()
		for _, k := range sortedKeys(s.Env) {
			cmd.Env = append(cmd.Env, k+"="+s.Env[k])
		}
		t = &mcp.CommandTransport{Command: cmd}
	case s.URL != "":
		hc := s.HTTPClient
		if hc == nil {
			hc = &http.Client{Transport: headers{base: http.DefaultTransport, h: s.Headers}}
		}
		t = &mcp.StreamableClientTransport{Endpoint: s.URL, HTTPClient: hc, DisableStandaloneSSE: true}
	default:
		return nil, errdefs.Validationf("mcp server %q: give a command (stdio) or a url (streamable HTTP)", s.Name)
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "agentd", Version: "1"}, nil)
	session, err := client.Connect(ctx, t, nil)
	if err != nil {
		return nil, errdefs.NotAvailablef("mcp server %q: connect: %v", s.Name, err)
	}
	return session, nil
}

// list adapts every tool the server lists.
func (c *Conn) list(ctx context.Context) error {
	for t, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return errdefs.NotAvailablef("mcp server %q: list tools: %v", c.name, err)
		}
		schema, err := json.Marshal(t.InputSchema)
		if err != nil || t.InputSchema == nil {
			schema = nil
		}
		c.tools = append(c.tools, &mcpTool{conn: c, remote: t.Name, name: c.name + Separator + t.Name,
			description: t.Description, schema: schema, effects: effectsOf(t.Annotations, keyArgument(schema) != ""), keyArg: keyArgument(schema)})
	}
	return nil
}

// Tools are the server's tools, in the order it listed them.
func (c *Conn) Tools() []tool.Tool { return c.tools }

// Close ends the session (and stops a stdio server); later calls fail.
func (c *Conn) Close() error {
	c.mu.Lock()
	c.closed = true
	session, gone := c.session, c.gone
	c.mu.Unlock()
	err := session.Close()
	<-gone
	return err
}

// mcpTool is one of a server's tools.
type mcpTool struct {
	conn        *Conn
	remote      string // the server's name for it
	name        string
	description string
	schema      json.RawMessage
	// effects is the kind the server's annotations declare (effects.go);
	// keyArg the argument that takes the effect key, if the tool has one.
	effects tool.Effects
	keyArg  string
	// status is the tool that reconciles a call in doubt (SetStatusTool).
	status *mcpTool
}

func (t *mcpTool) Name() string            { return t.name }
func (t *mcpTool) Description() string     { return t.description }
func (t *mcpTool) Schema() json.RawMessage { return t.schema }
func (t *mcpTool) Flags() tool.Flags       { return tool.Flags{Effects: t.effects} }

// Execute calls the tool on the server.
func (t *mcpTool) Execute(ctx context.Context, args json.RawMessage) (tool.Result, error) {
	params := &mcp.CallToolParams{Name: t.remote}
	if len(args) > 0 {
		params.Arguments = args
	}
	if call, ok := tool.CallFromContext(ctx); ok && call.IdempotencyKey != "" && t.effects.Recorded() {
		params.Meta = mcp.Meta{EffectKeyMeta: call.IdempotencyKey}
		params.Arguments = withKeyArgument(args, t.keyArg, call.IdempotencyKey)
	}
	res, err := t.conn.call(ctx, params)
	if err != nil {
		return tool.Result{}, errdefs.NotAvailablef("mcp server %q: %v", t.conn.name, err)
	}
	text := contentText(res.Content)
	if res.IsError {
		return tool.Result{Content: t.name + ": " + text, IsError: true}, nil
	}
	r := tool.Result{Content: text}
	if res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			r.Data = b
		}
	}
	return r, nil
}

// contentText is what the model reads of a result's content: its text,
// and a note for each part it cannot read as text.
func contentText(content []mcp.Content) string {
	parts := make([]string, 0, len(content))
	for _, c := range content {
		switch c := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, c.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.AudioContent:
			parts = append(parts, fmt.Sprintf("[audio %s, %d bytes]", c.MIMEType, len(c.Data)))
		case *mcp.ResourceLink:
			parts = append(parts, fmt.Sprintf("[resource %s]", c.URI))
		case *mcp.EmbeddedResource:
			if c.Resource != nil && c.Resource.Text != "" {
				parts = append(parts, c.Resource.Text)
			} else if c.Resource != nil {
				parts = append(parts, fmt.Sprintf("[resource %s]", c.Resource.URI))
			}
		default:
			parts = append(parts, fmt.Sprintf("[%T content]", c))
		}
	}
	return strings.Join(parts, "\n")
}

// headers adds fixed headers to every request.
type headers struct {
	base http.RoundTripper
	h    map[string]string
}

func (h headers) RoundTrip(req *http.Request) (*http.Response, error) {
	if len(h.h) > 0 {
		req = req.Clone(req.Context())
		for k, v := range h.h {
			req.Header.Set(k, v)
		}
	}
	return h.base.RoundTrip(req)
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
