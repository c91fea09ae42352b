package auth

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Options configure an Authenticator: API keys, JWTs, or both.
type Options struct {
	APIKeys []APIKey
	JWT     *JWTOptions
	// Realm names the server in WWW-Authenticate (default "agentd").
	Realm string
}

// Authenticator maps a request's credentials to a Principal.
type Authenticator struct {
	keys  *keySet
	jwt   *jwtVerifier // nil: JWTs are not accepted
	realm string
}

// New builds an Authenticator; a configuration that could never
// authenticate anybody is an error.
func New(o Options) (*Authenticator, error) {
	if len(o.APIKeys) == 0 && o.JWT == nil {
		return nil, errors.New("auth: declare api_keys, jwt, or both")
	}
	keys, err := newKeySet(o.APIKeys)
	if err != nil {
		return nil, fmt.Errorf("auth: %w", err)
	}
	a := &Authenticator{keys: keys, realm: o.Realm}
	if a.realm == "" {
		a.realm = "agentd"
	}
	if o.JWT != nil {
		if a.jwt, err = newJWTVerifier(*o.JWT); err != nil {
			return nil, fmt.Errorf("auth: %w", err)
		}
	}
	return a, nil
}

// errNoCredentials is a request that carries neither a key nor a token.
var errNoCredentials = errors.New("this route needs credentials: send Authorization: Bearer <API key or token>, or X-API-Key: <API key>")

// Authenticate returns the caller of r. Its errors are safe to answer:
// they never repeat the credentials.
func (a *Authenticator) Authenticate(ctx context.Context, r *http.Request) (Principal, error) {
	if key := r.Header.Get("X-API-Key"); key != "" {
		return a.apiKey(key)
	}
	authz := r.Header.Get("Authorization")
	if authz == "" {
		return Principal{}, errNoCredentials
	}
	scheme, cred, _ := strings.Cut(authz, " ")
	cred = strings.TrimSpace(cred)
	if !strings.EqualFold(scheme, "Bearer") || cred == "" {
		return Principal{}, badToken("the Authorization scheme must be Bearer")
	}
	if a.jwt != nil && looksLikeJWT(cred) {
		return a.jwt.verify(ctx, cred)
	}
	return a.apiKey(cred)
}

func (a *Authenticator) apiKey(key string) (Principal, error) {
	if p, ok := a.keys.lookup(key); ok {
		return p, nil
	}
	return Principal{}, badToken("the API key is not valid")
}

// challenge is the WWW-Authenticate value of a 401 for err (RFC 6750 §3).
func (a *Authenticator) challenge(err error) string {
	c := fmt.Sprintf("Bearer realm=%q", a.realm)
	if errors.Is(err, errNoCredentials) {
		return c // no error code when the request carried none
	}
	return c + fmt.Sprintf(", error=\"invalid_token\", error_description=%q", err.Error())
}
