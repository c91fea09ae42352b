package a2a

import (
	"context"
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/runtime"
)

// Security says how callers authenticate, for the cards to declare.
type Security struct {
	// APIKeys: an API key in X-API-Key or as a bearer token.
	APIKeys bool
	// JWT: a bearer JWT.
	JWT bool
}

func (s Security) enabled() bool { return s.APIKeys || s.JWT }

// The names of the declared schemes.
const (
	schemeAPIKey = a2a.SecuritySchemeName("apiKey")
	schemeBearer = a2a.SecuritySchemeName("bearer")
)

// declare adds the security schemes to card: any one of them suffices.
// With authentication on, the card also offers the extended card, which
// GetExtendedAgentCard serves to authenticated callers.
func (s Security) declare(card *a2a.AgentCard) {
	if !s.enabled() {
		return
	}
	card.SecuritySchemes = a2a.NamedSecuritySchemes{}
	if s.APIKeys {
		card.SecuritySchemes[schemeAPIKey] = a2a.APIKeySecurityScheme{
			Location: a2a.APIKeySecuritySchemeLocationHeader, Name: "X-API-Key",
			Description: "an agentd API key; also accepted as Authorization: Bearer <key>",
		}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{schemeAPIKey: {}})
	}
	if s.JWT || s.APIKeys {
		format := ""
		if s.JWT {
			format = "JWT"
		}
		card.SecuritySchemes[schemeBearer] = a2a.HTTPAuthSecurityScheme{Scheme: "Bearer", BearerFormat: format}
		card.SecurityRequirements = append(card.SecurityRequirements, a2a.SecurityRequirements{schemeBearer: {}})
	}
	card.Capabilities.ExtendedAgentCard = true
}

// extendedCard is agent a's card as GetExtendedAgentCard serves it to an
// authenticated caller. agentd declares no skills for authenticated callers
// only, so it is the public card (as built for the request's base URL).
func (s *Server) extendedCard(a *runtime.Agent) func(ctx context.Context) (*a2a.AgentCard, error) {
	return func(ctx context.Context) (*a2a.AgentCard, error) {
		base := s.opts.PublicURL
		if r := callInfoFrom(ctx).req; r != nil {
			base = s.baseURL(r)
		}
		return s.Card(a, base), nil
	}
}

// hybrid makes the served card's security schemes readable by v1.0 and
// v0.3 clients alike. Both versions name the map securitySchemes but
// shape its entries differently: the v0.3 producer writes {"type":
// "apiKey", "in": …, "name": …}, which a v1.0 parser rejects, and v1.0
// wraps each scheme ({"apiKeySecurityScheme": {…}}). Each entry gets
// both shapes; each parser ignores the other's keys.
func (s Security) hybrid(body []byte, card *a2a.AgentCard) []byte {
	if !s.enabled() {
		return body
	}
	var doc map[string]json.RawMessage
	var v03, v10 map[string]map[string]json.RawMessage
	v1, err := json.Marshal(card.SecuritySchemes)
	if err != nil || json.Unmarshal(body, &doc) != nil || json.Unmarshal(doc["securitySchemes"], &v03) != nil || json.Unmarshal(v1, &v10) != nil {
		return body
	}
	for name, wrapper := range v10 {
		if v03[name] == nil {
			v03[name] = map[string]json.RawMessage{}
		}
		for k, v := range wrapper {
			v03[name][k] = v
		}
	}
	if doc["securitySchemes"], err = json.Marshal(v03); err != nil {
		return body
	}
	out, err := json.Marshal(doc)
	if err != nil {
		return body
	}
	return out
}
