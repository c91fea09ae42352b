package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/goleak"

	"agentd/internal/api"
	"agentd/internal/config"
	"agentd/internal/engine/conformance"
	"agentd/internal/mcpserver"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// testTimeout bounds every wait in these tests.
const testTimeout = 20 * time.Second

// env is a real agentd MCP server on a loopback listener: the demo agents
// and point (testdata/point.yaml) on a memstore runtime.
type env struct {
	rt   *runtime.Runtime
	ms   *mcpserver.Server
	base string
}

func newEnv(t *testing.T) *env { return newEnvWith(t, mcpserver.Options{}) }

func newEnvB(b *testing.B) *env { return newEnvWith(b, mcpserver.Options{}) }

// newEnvWith is newEnv with the MCP face's options.
func newEnvWith(t testing.TB, opts mcpserver.Options) *env {
	t.Helper()
	var agents []*runtime.Agent
	for _, path := range []string{"", "testdata/point.yaml"} {
		cfg, err := config.Load(path)
		if err != nil {
			t.Fatal(err)
		}
		as, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cfg.Close() })
		agents = append(agents, as...)
	}
	for _, a := range agents {
		if a.ID == "conformance" {
			a.Engine = conformance.New(a.ID).WithDelay(20 * time.Millisecond)
		}
	}
	rt, err := runtime.New(runtime.Options{
		Store: memstore.New(), Agents: agents, CancelGrace: 300 * time.Millisecond, FlushWindow: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	api.New(rt, api.Options{}).Mount(r) // a call's run, seen on REST
	ms := mcpserver.New(rt, opts)
	ms.Mount(r)
	srv := httptest.NewServer(r)
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		ms.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return &env{rt: rt, ms: ms, base: srv.URL}
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a go-sdk client session on path (/mcp or
// /mcp/agents/{id}) with opts.
func (e *env) connect(t *testing.T, path string, opts *mcp.ClientOptions) *mcp.ClientSession {
	t.Helper()
	c := mcp.NewClient(&mcp.Implementation{Name: "agentd-test", Version: "1"}, opts)
	cs, err := c.Connect(ctxT(t), &mcp.StreamableClientTransport{Endpoint: e.base + path}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

// progressLog records the progress notifications a client receives.
// The client hands notifications to the handler on their own goroutines,
// so a call's last ones may arrive after its result: tests wait for what
// they expect (until).
type progressLog struct {
	mu    sync.Mutex
	notes []*mcp.ProgressNotificationParams
	first chan struct{}
	once  sync.Once
	grew  chan struct{} // closed and replaced on every note
}

func newProgressLog() *progressLog {
	return &progressLog{first: make(chan struct{}), grew: make(chan struct{})}
}

func (p *progressLog) handler(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
	p.mu.Lock()
	p.notes = append(p.notes, req.Params)
	close(p.grew)
	p.grew = make(chan struct{})
	p.mu.Unlock()
	p.once.Do(func() { close(p.first) })
}

// until waits for the notes to satisfy ok and returns them; at the
// deadline it returns what came.
func (p *progressLog) until(t *testing.T, ok func([]*mcp.ProgressNotificationParams) bool) []*mcp.ProgressNotificationParams {
	t.Helper()
	deadline := time.After(5 * time.Second)
	for {
		p.mu.Lock()
		notes, grew := append([]*mcp.ProgressNotificationParams(nil), p.notes...), p.grew
		p.mu.Unlock()
		if ok(notes) {
			return notes
		}
		select {
		case <-grew:
		case <-deadline:
			return notes
		}
	}
}

func (p *progressLog) all() []*mcp.ProgressNotificationParams {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]*mcp.ProgressNotificationParams(nil), p.notes...)
}

// textOf is the text content of a result, joined.
func textOf(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			s += tc.Text
		}
	}
	return s
}
