package a2a_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/goleak"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/config"
	"agentd/internal/engine/conformance"
	"agentd/internal/pgtest"
	"agentd/internal/runtime"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(pgMain{m}) }

// pgMain runs the tests under pgtest, which provides and tears down the
// PostgreSQL databases of the push benchmark.
type pgMain struct{ m *testing.M }

func (p pgMain) Run() int { return pgtest.Run(p.m) }

// testTimeout bounds every wait in these tests.
const testTimeout = 20 * time.Second

// env is a real agentd A2A server on a loopback listener: the demo agents
// (echo, assistant, conformance) on a memstore runtime.
type env struct {
	rt   *runtime.Runtime
	st   store.Store // the runtime's store, for what tests do behind its back (pruning)
	a2a  *agenta2a.Server
	srv  *httptest.Server
	base string
}

func newEnv(t testing.TB, tune ...func(*agenta2a.Options)) *env {
	t.Helper()
	return newEnvServer(t, 0, nil, tune...)
}

// newEnvServer is newEnv with an HTTP server WriteTimeout and a chance to
// change the agents before the runtime starts.
func newEnvServer(t testing.TB, writeTimeout time.Duration, agentsHook func([]*runtime.Agent), tune ...func(*agenta2a.Options)) *env {
	t.Helper()
	return newEnvOn(t, memstore.New(), writeTimeout, agentsHook, tune...)
}

// newEnvOn is newEnvServer on the store st.
func newEnvOn(t testing.TB, st store.Store, writeTimeout time.Duration, agentsHook func([]*runtime.Agent), tune ...func(*agenta2a.Options)) *env {
	t.Helper()
	cfg, err := config.Load("")
	if err != nil {
		t.Fatal(err)
	}
	agents, err := cfg.Build(config.BuildOptions{Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range agents {
		if a.ID == "conformance" {
			a.Engine = conformance.New(a.ID).WithDelay(100 * time.Millisecond)
		}
	}
	if agentsHook != nil {
		agentsHook(agents)
	}
	rt, err := runtime.New(runtime.Options{
		Store: st, Agents: agents, CancelGrace: 300 * time.Millisecond, FlushWindow: 5 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	opts := agenta2a.Options{DefaultAgent: cfg.Server.DefaultAgent, KeepAlive: time.Second, PushStore: st}
	for _, f := range tune {
		f(&opts)
	}
	s, err := agenta2a.New(rt, opts)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	s.Mount(r)
	srv := httptest.NewUnstartedServer(r)
	srv.Config.WriteTimeout = writeTimeout
	srv.Start()
	e := &env{rt: rt, st: st, a2a: s, srv: srv, base: srv.URL}
	t.Cleanup(func() {
		srv.CloseClientConnections()
		srv.Close()
		// Tasks a test left running are interrupted after this drain.
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return e
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// binding names a transport and protocol version an SDK client speaks.
type binding struct {
	name     string
	protocol a2a.TransportProtocol
	version  a2a.ProtocolVersion
}

var bindings = []binding{
	{"jsonrpc-1.0", a2a.TransportProtocolJSONRPC, a2a.Version},
	{"rest-1.0", a2a.TransportProtocolHTTPJSON, a2a.Version},
	{"jsonrpc-0.3", a2a.TransportProtocolJSONRPC, a2av0.Version},
	{"rest-0.3", a2a.TransportProtocolHTTPJSON, a2av0.Version},
}

// card resolves an agent's card the way SDK clients do.
func (e *env) card(t testing.TB, agentID string) *a2a.AgentCard {
	t.Helper()
	c, err := agentcard.DefaultResolver.Resolve(ctxT(t), e.base+"/agents/"+agentID)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// client is a2a-go's client for agentID over b, built from the card's
// interface for that binding.
func (e *env) client(t testing.TB, agentID string, b binding) *a2aclient.Client {
	t.Helper()
	card := e.card(t, agentID)
	var iface *a2a.AgentInterface
	for _, i := range card.SupportedInterfaces {
		if i.ProtocolBinding == b.protocol && i.ProtocolVersion == b.version {
			iface = i
		}
	}
	if iface == nil {
		t.Fatalf("card of %s has no %s interface: %+v", agentID, b.name, card.SupportedInterfaces)
	}
	opts := []a2aclient.FactoryOption{
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{}),
	}
	c, err := a2aclient.NewFromEndpoints(ctxT(t), []*a2a.AgentInterface{iface}, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

func textMessage(text string) *a2a.Message {
	return a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(text))
}

func sendReq(text string) *a2a.SendMessageRequest {
	return &a2a.SendMessageRequest{Message: textMessage(text)}
}

// collect drains a stream, failing the test on an error.
func collect(t testing.TB, seq func(func(a2a.Event, error) bool)) []a2a.Event {
	t.Helper()
	var out []a2a.Event
	for ev, err := range seq {
		if err != nil {
			t.Fatalf("stream error after %d events: %v", len(out), err)
		}
		out = append(out, ev)
	}
	return out
}

// seqOf reads the resumable-stream seq of an update (0 for a Task).
func seqOf(ev a2a.Event) int64 {
	var meta map[string]any
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		meta = v.Metadata
	case *a2a.TaskArtifactUpdateEvent:
		meta = v.Metadata
	}
	switch n := meta[agenta2a.MetaSeq].(type) {
	case float64:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

func taskOf(t testing.TB, res a2a.SendMessageResult) *a2a.Task {
	t.Helper()
	task, ok := res.(*a2a.Task)
	if !ok {
		t.Fatalf("got %T, want a task", res)
	}
	return task
}

// answerText concatenates the text of the streamed answer artifacts.
func answerText(evs []a2a.Event) string {
	var b bytes.Buffer
	for _, ev := range evs {
		if a, ok := ev.(*a2a.TaskArtifactUpdateEvent); ok && a.Artifact.Name == "answer" {
			for _, p := range a.Artifact.Parts {
				b.WriteString(p.Text())
			}
		}
	}
	return b.String()
}

// rawCall posts body to path with headers and returns the status, the
// content type and the decoded JSON body.
func (e *env) rawCall(t testing.TB, method, path string, body []byte, header map[string]string) (int, string, map[string]any) {
	t.Helper()
	req, err := http.NewRequestWithContext(ctxT(t), method, e.base+path, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range header {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		b = firstSSEData(b) // an error on a streaming call is its one event
	}
	var out map[string]any
	_ = json.Unmarshal(b, &out)
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

// firstSSEData is the data of the first event of an SSE body.
func firstSSEData(b []byte) []byte {
	for _, line := range bytes.Split(b, []byte("\n")) {
		if data, ok := bytes.CutPrefix(line, []byte("data:")); ok {
			return bytes.TrimSpace(data)
		}
	}
	return nil
}

// rpcCode is the JSON-RPC error code of a decoded response (0 if none).
func rpcCode(body map[string]any) int {
	e, _ := body["error"].(map[string]any)
	n, _ := e["code"].(float64)
	return int(n)
}

// agentOptions are the front end's options, tuned per test.
type agentOptions = agenta2a.Options

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// errorMessage is the message of a JSON-RPC or HTTP+JSON error body.
func errorMessage(body map[string]any) string {
	e, _ := body["error"].(map[string]any)
	m, _ := e["message"].(string)
	return m
}
