package a2a

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
	"github.com/a2aproject/a2a-go/v2/a2asrv"

	"agentd/internal/runtime"
)

// Card returns agent a's card with its interfaces under base (scheme, host
// and optional path prefix, no trailing slash). The v1.0 interfaces come
// first (preferred); the v0.3 ones follow at the same URLs, which is what
// the combined card's v0.3 fields (url, preferredTransport,
// additionalInterfaces) are derived from.
func (s *Server) Card(a *runtime.Agent, base string) *a2a.AgentCard {
	c := a.Card
	root := base + "/agents/" + a.ID
	rpc, rest := root+"/jsonrpc", root+"/rest"
	card := &a2a.AgentCard{
		Name:        nonEmpty(c.Name, a.ID),
		Description: nonEmpty(c.Description, nonEmpty(a.Description, "Agent "+a.ID)),
		Version:     nonEmpty(c.Version, "1.0.0"),
		SupportedInterfaces: []*a2a.AgentInterface{
			{URL: rpc, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version},
			{URL: rest, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version},
			{URL: rpc, ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version},
			{URL: rest, ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2av0.Version},
		},
		Capabilities: a2a.AgentCapabilities{
			Streaming: c.Capabilities.Streaming,
			// Push notifications are delivered to every config a client
			// sets (push_config.go; delivery: internal/push). The
			// extended card is not offered yet; the capabilities say so,
			// and its method answers -32004.
			PushNotifications: true,
			ExtendedAgentCard: false,
			Extensions:        []a2a.AgentExtension{extensionDecl(), callTreeDecl()},
		},
		DefaultInputModes:  nonEmptyList(c.DefaultInputModes, []string{"text/plain"}),
		DefaultOutputModes: nonEmptyList(c.DefaultOutputModes, []string{"text/plain"}),
		Provider:           s.opts.Provider,
		Skills:             make([]a2a.AgentSkill, 0, len(c.Skills)),
	}
	for _, sk := range c.Skills {
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: sk.ID, Name: nonEmpty(sk.Name, sk.ID), Description: nonEmpty(sk.Description, sk.Name),
			Tags: nonEmptyList(sk.Tags, []string{a.ID}), Examples: sk.Examples,
			InputModes: sk.InputModes, OutputModes: sk.OutputModes,
		})
	}
	if len(card.Skills) == 0 {
		// A2A requires at least a description of what the agent does.
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: a.ID, Name: card.Name, Description: card.Description, Tags: []string{a.ID},
		})
	}
	s.opts.Security.declare(card)
	return card
}

func (s *Server) defaultCard(w http.ResponseWriter, r *http.Request) {
	s.writeCard(w, r, s.agents[s.opts.DefaultAgent].h.agent)
}

func (s *Server) agentCard(w http.ResponseWriter, r *http.Request) {
	id := chi.URLParam(r, "agentID")
	b := s.agents[id]
	if b == nil {
		restError(w, http.StatusNotFound, "NOT_FOUND", a2a.ErrInvalidRequest, s.unknownAgent(id))
		return
	}
	s.writeCard(w, r, b.h.agent)
}

// writeCard answers with the combined v1.0 + v0.3 card (a2a-go's
// compatibility producer), an ETag over its bytes and Cache-Control; a
// matching If-None-Match gets 304.
func (s *Server) writeCard(w http.ResponseWriter, r *http.Request, a *runtime.Agent) {
	card := s.Card(a, s.baseURL(r))
	fromPeer(r.Context(), a, card)
	s.addAssistantSkills(r.Context(), a, card)
	producer := a2av0.NewStaticAgentCardProducer(card).(a2asrv.AgentCardJSONProducer)
	body, err := producer.CardJSON(r.Context())
	if err != nil {
		s.opts.Logger.Error("a2a: agent card", "agent", a.ID, "err", err)
		restError(w, http.StatusInternalServerError, "INTERNAL", a2a.ErrInternalError, "agent card of "+a.ID+": "+err.Error())
		return
	}
	body = s.opts.Security.hybrid(body, card)
	sum := sha256.Sum256(body)
	etag := `"` + hex.EncodeToString(sum[:12]) + `"`
	h := w.Header()
	h.Set("ETag", etag)
	h.Set("Cache-Control", "public, max-age="+strconv.Itoa(int(s.opts.CardMaxAge.Seconds())))
	h.Set("Vary", "Host, X-Forwarded-Host, X-Forwarded-Proto")
	h.Set("Access-Control-Allow-Origin", "*")
	if etagMatch(r.Header.Get("If-None-Match"), etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	h.Set("Content-Type", "application/json")
	_, _ = w.Write(body)
}

// peerCarder is an engine that serves its agent through a peer A2A agent
// (engine/remote) and can tell the peer's card.
type peerCarder interface {
	Card(ctx context.Context) (*a2a.AgentCard, error)
}

// peerCardWait bounds the wait for a peer's card; past it, or when the
// peer cannot be reached, the configured card is served.
const peerCardWait = 2 * time.Second

// fromPeer derives a remote agent's card from its peer's: the peer's
// skills and input/output modes, under agentd's own URLs and name.
func fromPeer(ctx context.Context, a *runtime.Agent, card *a2a.AgentCard) {
	pc, ok := a.Engine.(peerCarder)
	if !ok {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, peerCardWait)
	defer cancel()
	peer, err := pc.Card(ctx)
	if err != nil {
		return
	}
	if len(peer.Skills) > 0 {
		card.Skills = slices.Clone(peer.Skills)
	}
	card.DefaultInputModes = nonEmptyList(peer.DefaultInputModes, card.DefaultInputModes)
	card.DefaultOutputModes = nonEmptyList(peer.DefaultOutputModes, card.DefaultOutputModes)
}

func etagMatch(header, etag string) bool {
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimPrefix(strings.TrimSpace(t), "W/")
		if t == etag || t == "*" {
			return true
		}
	}
	return false
}

// baseURL is the configured public URL, or the one the request was made
// to (behind a proxy: X-Forwarded-Proto and X-Forwarded-Host).
func (s *Server) baseURL(r *http.Request) string {
	if s.opts.PublicURL != "" {
		return s.opts.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := firstValue(r.Header.Get("X-Forwarded-Proto")); p == "http" || p == "https" {
		scheme = p
	}
	host := r.Host
	if h := firstValue(r.Header.Get("X-Forwarded-Host")); h != "" && !strings.ContainsAny(h, "/ \\@") {
		host = h
	}
	return scheme + "://" + host
}

func firstValue(v string) string {
	if i := strings.IndexByte(v, ','); i >= 0 {
		v = v[:i]
	}
	return strings.ToLower(strings.TrimSpace(v))
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func nonEmptyList(s, def []string) []string {
	if len(s) == 0 {
		return def
	}
	return s
}
