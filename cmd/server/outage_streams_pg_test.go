package main

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/pgtest"
)

// TestStreamsDuringAnOutageHideItsCause: streams that follow a run through
// the store (on a replica that does not execute it) while the database
// stops say only what a client can act on — over REST SSE, an A2A stream,
// the Agent Protocol's join stream, an AG-UI stream and the AI SDK's
// resume stream — nor does an MCP tool call made meanwhile; never the
// store's error, its address, user or database.
func TestStreamsDuringAnOutageHideItsCause(t *testing.T) {
	skipShort(t)
	db := pgtest.NewCluster(t)
	cfg := writeConfig(t, nil)
	a := startReplica(t, "A", db.DSN(), cfg)
	b := startReplica(t, "B", db.DSN(), cfg)
	c := newClient(t)
	id := a.submit(t, c, "stream 400 every 25ms")

	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	rest := openRaw(ctx, t, http.MethodGet, b.base+"/v1/runs/"+id+"/events", "")
	rpc := `{"jsonrpc": "2.0", "id": 1, "method": "SubscribeToTask", "params": {"id": "` + id + `", "metadata": {"afterSeq": 0}}}`
	a2aStream := openRaw(ctx, t, http.MethodPost, b.base+"/agents/echo/jsonrpc", rpc)
	ctxID := a.run(t, c, id).ContextID
	lg := openRaw(ctx, t, http.MethodGet, b.base+"/lg/threads/"+ctxID+"/runs/"+id+"/stream?stream_mode=messages-tuple", "")
	agui := openRaw(ctx, t, http.MethodGet, b.base+"/ag-ui/agents/echo/threads/"+ctxID+"/runs/"+id+"/events", "")
	aisdk := openRaw(ctx, t, http.MethodGet, b.base+"/ai-sdk/agents/echo/chat/"+ctxID+"/stream", "")
	rest.waitFor(t, "event: delta") // each follows the run
	a2aStream.waitFor(t, "artifactUpdate")
	lg.waitFor(t, "event: messages")
	agui.waitFor(t, "TEXT_MESSAGE_CONTENT")
	aisdk.waitFor(t, "text-delta")
	mcpClient := mcp.NewClient(&mcp.Implementation{Name: "outage-test", Version: "1"}, nil)
	session, err := mcpClient.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: b.base + "/mcp"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer session.Close()
	if err := db.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Start(context.Background()) })
	time.Sleep(3 * time.Second) // the followers find the store gone
	var mcpText strings.Builder
	res, err := session.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "while down"}})
	if err != nil {
		mcpText.WriteString(err.Error())
	} else {
		for _, c := range res.Content {
			if tc, ok := c.(*mcp.TextContent); ok {
				mcpText.WriteString(tc.Text)
			}
		}
		if !res.IsError {
			t.Errorf("an MCP call during the outage answered %q, want a tool error", mcpText.String())
		}
	}
	t.Logf("MCP tool call during the outage: %s", mcpText.String())
	wantNoStoreText(t, "MCP tool call", mcpText.String())
	cancel()
	for what, s := range map[string]*rawStream{"REST event stream": rest, "A2A stream": a2aStream, "Agent Protocol join stream": lg, "AG-UI stream": agui, "AI SDK resume stream": aisdk} {
		wantNoStoreText(t, what, s.text())
	}
}

// rawStream reads a streaming answer's bytes as they come.
type rawStream struct {
	mu   chan struct{} // one token: guards buf
	buf  strings.Builder
	done chan struct{}
}

// openRaw starts a streaming request and collects its body until ctx ends.
func openRaw(ctx context.Context, t *testing.T, method, url, body string) *rawStream {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "text/event-stream")
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("A2A-Version", "1.0")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	s := &rawStream{mu: make(chan struct{}, 1), done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer res.Body.Close()
		p := make([]byte, 4096)
		for {
			n, err := res.Body.Read(p)
			s.mu <- struct{}{}
			s.buf.Write(p[:n])
			<-s.mu
			if err != nil {
				return
			}
		}
	}()
	t.Cleanup(func() { <-s.done })
	return s
}

// text is what the stream carried so far.
func (s *rawStream) text() string {
	s.mu <- struct{}{}
	defer func() { <-s.mu }()
	return s.buf.String()
}

// waitFor waits until the stream carried want.
func (s *rawStream) waitFor(t *testing.T, want string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(s.text(), want) {
		select {
		case <-s.done:
			t.Fatalf("the stream ended before %q: %s", want, s.text())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("no %q within 10s: %s", want, s.text())
		}
	}
}

// wantNoStoreText fails if text a client got names the store, a user, a
// database, a host or a port.
func wantNoStoreText(t *testing.T, what, text string) {
	t.Helper()
	for _, leak := range []string{"127.0.0.1", "user=", "database", "postgres", "pgstore", "dial", "connect", "FATAL"} {
		if strings.Contains(text, leak) {
			i := strings.Index(text, leak)
			t.Errorf("%s tells the client %q: …%s…", what, leak, text[max(0, i-200):min(len(text), i+200)])
		}
	}
}
