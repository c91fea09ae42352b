package config

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"time"

	"agentd/internal/mcptool"
)

// MCPServer declares a Model Context Protocol server whose tools a loop
// agent may call, named "<name>__<tool>": a command agentd starts and
// talks to over stdio (command, args, env), or a streamable-HTTP endpoint
// (url, headers). Values of env and headers may name environment
// variables ("${GITHUB_TOKEN}"), so secrets stay out of the file.
type MCPServer struct {
	Name    string            `json:"name"`
	Command string            `json:"command,omitempty"`
	Args    []string          `json:"args,omitempty"`
	Env     map[string]string `json:"env,omitempty"`
	URL     string            `json:"url,omitempty"`
	Headers map[string]string `json:"headers,omitempty"`
}

// mcpConnectTimeout bounds starting (or reaching) a server and listing its
// tools.
const mcpConnectTimeout = 30 * time.Second

var mcpNamePattern = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,32}$`)

// validateMCP checks an agent's MCP servers without starting any.
func (a Agent) validateMCP(path string) error {
	for i, s := range a.MCPServers {
		p := fmt.Sprintf("%s.mcp_servers[%d]", path, i)
		switch {
		case !mcpNamePattern.MatchString(s.Name):
			return fmt.Errorf("%s.name: %q must be 1-32 letters, digits, '_' or '-'", p, s.Name)
		case slices.ContainsFunc(a.MCPServers[:i], func(o MCPServer) bool { return o.Name == s.Name }):
			return fmt.Errorf("%s.name: %q is declared twice", p, s.Name)
		case (s.Command == "") == (s.URL == ""):
			return fmt.Errorf("%s: give command (stdio) or url (streamable HTTP), one of them", p)
		case s.Command == "" && (len(s.Args) > 0 || len(s.Env) > 0):
			return fmt.Errorf("%s: args and env belong to a command", p)
		case s.URL == "" && len(s.Headers) > 0:
			return fmt.Errorf("%s.headers: headers belong to a url", p)
		}
		if s.URL != "" {
			if u, err := url.Parse(s.URL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
				return fmt.Errorf("%s.url: %q is not an absolute http(s) URL", p, s.URL)
			}
		}
	}
	return nil
}

// isMCPTool reports whether name is a tool of one of a's MCP servers, as
// far as its name tells before the server is asked.
func (a Agent) isMCPTool(name string) bool {
	for _, s := range a.MCPServers {
		if rest, ok := strings.CutPrefix(name, s.Name+mcptool.Separator); ok && rest != "" {
			return true
		}
	}
	return false
}

// mcpTools connects to agent a's MCP servers (once per server name in the
// file), registers their tools and returns names with them added.
func (b *builder) mcpTools(path string, a Agent, names []string) ([]string, error) {
	for i, s := range a.MCPServers {
		p := fmt.Sprintf("%s.mcp_servers[%d]", path, i)
		conn, err := b.mcpConn(p, s)
		if err != nil {
			return nil, err
		}
		for _, t := range conn.Tools() {
			if !slices.Contains(names, t.Name()) {
				names = append(names, t.Name())
			}
		}
	}
	return names, nil
}

// mcpConn connects to s and registers its tools, or returns the
// connection an earlier agent made to the same server.
func (b *builder) mcpConn(path string, s MCPServer) (*mcptool.Conn, error) {
	if prev, ok := b.c.mcp[s.Name]; ok {
		if !reflect.DeepEqual(prev.decl, s) {
			return nil, fmt.Errorf("%s.name: %q is declared differently by another agent (server names are shared: use another name)", path, s.Name)
		}
		return prev.conn, nil
	}
	expand := func(v string) string { return os.Expand(v, b.opts.Getenv) }
	srv := mcptool.Server{Name: s.Name, Command: s.Command, Args: s.Args, URL: s.URL,
		Env: map[string]string{}, Headers: map[string]string{}}
	for k, v := range s.Env {
		srv.Env[k] = expand(v)
	}
	for k, v := range s.Headers {
		srv.Headers[k] = expand(v)
	}
	ctx, cancel := context.WithTimeout(context.Background(), mcpConnectTimeout)
	defer cancel()
	conn, err := mcptool.Connect(ctx, srv)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if b.c.mcp == nil {
		b.c.mcp = map[string]mcpConn{}
	}
	b.c.mcp[s.Name] = mcpConn{decl: s, conn: conn}
	if err := b.c.setStatusTools(s.Name, conn); err != nil { // effects.go
		return nil, err
	}
	for _, t := range conn.Tools() {
		if err := b.reg.Register(t); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
	}
	return conn, nil
}

// mcpConn is a server Build connected to.
type mcpConn struct {
	decl MCPServer
	conn *mcptool.Conn
}

// Close ends the MCP sessions Build opened (stopping stdio servers). The
// agents built must not run afterwards.
func (c *Config) Close() error {
	var errs []error
	for name, m := range c.mcp {
		if err := m.conn.Close(); err != nil {
			errs = append(errs, fmt.Errorf("mcp server %q: %w", name, err))
		}
	}
	c.mcp = nil
	return errors.Join(errs...)
}
