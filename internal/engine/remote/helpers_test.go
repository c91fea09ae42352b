package remote_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"go.uber.org/goleak"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/agent"
	"agentd/internal/config"
	"agentd/internal/engine"
	"agentd/internal/engine/conformance"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/remote"
	"agentd/internal/model"
	"agentd/internal/runtime"
	"agentd/internal/store/memstore"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const testTimeout = 20 * time.Second

// peerServer is a second agentd in this process: the demo agents on a
// memstore runtime behind the A2A face, on a loopback listener.
type peerServer struct {
	rt  *runtime.Runtime
	srv *httptest.Server
}

func newPeer(t testing.TB) *peerServer { return newServer(t, nil) }

// newRelay is a local agentd whose agent "fed" is served by the peer
// agent at cardURL.
func newRelay(t testing.TB, cardURL string) *peerServer {
	return newServer(t, func(agents []*runtime.Agent) []*runtime.Agent {
		e := newEngine(t, cardURL)
		return append(agents, &runtime.Agent{Agent: agent.Agent{ID: "fed", Card: agent.AgentCard{
			Name: "fed", Version: "1.0.0", Capabilities: agent.AgentCapabilities{Streaming: true},
		}}, Engine: e})
	})
}

func newServer(t testing.TB, hook func([]*runtime.Agent) []*runtime.Agent) *peerServer {
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
	if hook != nil {
		agents = hook(agents)
	}
	rt, err := runtime.New(runtime.Options{Store: memstore.New(), Agents: agents, CancelGrace: 300 * time.Millisecond, FlushWindow: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := agenta2a.New(rt, agenta2a.Options{DefaultAgent: cfg.Server.DefaultAgent, KeepAlive: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	s.Mount(r)
	p := &peerServer{rt: rt, srv: httptest.NewServer(r)}
	t.Cleanup(func() {
		p.srv.CloseClientConnections()
		p.srv.Close()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = rt.Shutdown(ctx)
	})
	return p
}

// cardURL is the card of the peer's agent id.
func (p *peerServer) cardURL(id string) string {
	return p.srv.URL + "/agents/" + id + "/.well-known/agent-card.json"
}

// newEngine is the remote engine for the peer's agent id, loopback allowed.
func newEngine(t testing.TB, cardURL string, tune ...func(*remote.Config)) *remote.Engine {
	t.Helper()
	cfg := remote.Config{AgentID: "relay", Peer: cardURL, AllowPrivate: true, Timeout: 5 * time.Second}
	for _, f := range tune {
		f(&cfg)
	}
	e, err := remote.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

func boardWith(text string) *engine.Board {
	b := engine.NewBoard()
	b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
	return b
}

func answerWith(text string) func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
	return func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
		return engine.UserReply{Parts: []model.Part{model.TextPart(text)}}, nil
	}
}

// tokens concatenates the token deltas h recorded for run runID.
func tokens(t testing.TB, h *enginetest.RecordingHost, runID string) []string {
	t.Helper()
	return tokensOf(h.Events())
}

func lastAnswer(b *engine.Board) string {
	msgs := b.Channel(engine.MainChannel)
	if len(msgs) == 0 || msgs[len(msgs)-1].Role != model.RoleAssistant {
		return ""
	}
	return msgs[len(msgs)-1].Text()
}

func joined(s []string) string { return strings.Join(s, "") }

func tokensOf(evs []engine.Event) []string {
	var out []string
	for _, ev := range evs {
		if tok, ok := ev.(engine.Token); ok {
			out = append(out, tok.Text)
		}
	}
	return out
}

func taskIDOf(t testing.TB, cp engine.Checkpoint) string {
	t.Helper()
	var st struct {
		TaskID string `json:"task_id"`
	}
	if err := json.Unmarshal(cp.Payload, &st); err != nil {
		t.Fatal(err)
	}
	return st.TaskID
}
