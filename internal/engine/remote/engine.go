package remote

import (
	"context"
	"net/http"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
)

// Engine serves an agent through a peer A2A agent. It is safe for
// concurrent use: attempts share the card cache, the HTTP client and the
// circuit breaker.
type Engine struct {
	cfg     Config
	http    *http.Client
	cards   *cardCache
	breaker *breaker
}

// New returns the engine for cfg.
func New(cfg Config) (*Engine, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.withDefaults()
	hc := newHTTPClient(cfg)
	return &Engine{
		cfg:     cfg,
		http:    hc,
		cards:   &cardCache{client: hc, ttl: cfg.CardTTL, now: time.Now},
		breaker: &breaker{failures: cfg.BreakerFailures, cooldown: cfg.BreakerCooldown, now: time.Now},
	}, nil
}

// Capabilities: the engine resumes from its checkpoints (after input and
// after a cut attempt), asks the user what the peer asks, and checkpoints.
// A cancel of a run parked on the peer's question needs the engine too: the
// peer task waits for an answer and must be canceled as well.
func (e *Engine) Capabilities() engine.Capabilities {
	return engine.Capabilities{SupportsResume: true, EmitsUserPrompt: true, EmitsCheckpoint: true, HandlesParkedInterrupts: true,
		ResumeContinuesOutput: true}
}

// CanResume accepts the engine's own checkpoints.
func (e *Engine) CanResume(cp engine.Checkpoint) error {
	_, err := decodeState(cp)
	return err
}

// Card returns the peer's card, for a host that derives the local card
// from it.
func (e *Engine) Card(ctx context.Context) (*a2a.AgentCard, error) {
	ctx, cancel := context.WithTimeout(ctx, e.cfg.Timeout)
	defer cancel()
	u, err := e.cfg.cardURL()
	if err != nil {
		return nil, err
	}
	return e.cards.get(ctx, u)
}

// Execute runs one attempt: a fresh task on the peer, the user's answer
// to the peer's question, or a re-attachment to the peer task after a cut.
func (e *Engine) Execute(ctx context.Context, run engine.Run, host engine.Host, board *engine.Board) (out *engine.Board, err error) {
	if err := engine.ValidateResume(run); err != nil {
		return board, err
	}
	var st state
	if run.ResumeFrom != nil {
		if st, err = decodeState(*run.ResumeFrom); err != nil {
			return board, err
		}
		board = engine.RestoreBoard(run.ResumeFrom.Board)
	}
	if board == nil {
		board = engine.NewBoard()
	}
	step := engine.Step{RunID: run.ID, Actor: e.cfg.AgentID}
	_ = host.Publish(ctx, engine.StepStarted{Step: step})
	x := &attempt{e: e, ctx: ctx, run: run, host: host, board: board, st: st, known: make(chan struct{})}
	if st.TaskID != "" {
		x.markKnown() // a resumed attempt knows its peer task
	}
	err = x.execute()
	if err != nil && !errdefs.IsInterrupted(err) {
		_ = host.Publish(ctx, engine.StepFailed{Step: step, Err: err})
	} else if err == nil {
		_ = host.Publish(ctx, engine.StepCompleted{Step: step})
	}
	return board, err
}

// peer is one attempt's connection: the card and a client on the best
// interface it offers.
type peer struct {
	card      *a2a.AgentCard
	client    *a2aclient.Client
	resumable bool // the peer declares agentd's resumable-stream extension
}

// connect resolves the card and builds a client, through the breaker.
// a2a-go's factory picks the newest protocol version the card offers
// (v1.0 before v0.3), JSON-RPC before HTTP+JSON at equal versions.
func (e *Engine) connect(ctx context.Context) (*peer, error) {
	if err := e.breaker.allow(e.cfg.Peer); err != nil {
		return nil, errdefs.Public(err)
	}
	card, err := e.Card(ctx)
	if err != nil {
		// A success is recorded when the peer streams, not here: the card
		// may come from the cache while the peer is down.
		e.breaker.record(err)
		return nil, publicIfUnreachable(err)
	}
	opts := []a2aclient.FactoryOption{
		a2aclient.WithConfig(a2aclient.Config{PreferredTransports: []a2a.TransportProtocol{a2a.TransportProtocolJSONRPC, a2a.TransportProtocolHTTPJSON}}),
		a2aclient.WithJSONRPCTransport(e.http),
		a2aclient.WithRESTTransport(e.http),
		a2av0.WithJSONRPCTransport(a2av0.JSONRPCTransportConfig{Client: e.http}),
		a2av0.WithRESTTransport(a2av0.RESTTransportConfig{Client: e.http}),
	}
	client, err := a2aclient.NewFromCard(ctx, card, opts...)
	if err != nil {
		return nil, errdefs.Validationf("peer %s: no usable interface on its card: %v", e.cfg.Peer, err)
	}
	p := &peer{card: card, client: client}
	for _, ext := range card.Capabilities.Extensions {
		if ext.URI == ExtensionURI {
			p.resumable = true
		}
	}
	return p, nil
}

// publicIfUnreachable lets the client see that the peer, not agentd's
// store, is what cannot be reached.
func publicIfUnreachable(err error) error {
	if errdefs.IsNotAvailable(err) || errdefs.IsTimeout(err) {
		return errdefs.Public(err)
	}
	return err
}
