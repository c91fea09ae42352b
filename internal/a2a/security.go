package a2a

import (
	"context"

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
