package auth

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/hmac"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"time"
)

// JWTOptions configure token verification. Issuer and Audience are
// required; at least one of HS256Secret and JWKSURL is set.
type JWTOptions struct {
	Issuer   string
	Audience string
	// HS256Secret verifies HS256 tokens (read from the environment by the
	// caller; at least 32 bytes).
	HS256Secret []byte
	// JWKSURL serves the public keys of RS256 and ES256 tokens.
	JWKSURL string
	// TenantClaim names the claim holding the tenant (default "tenant").
	TenantClaim string
	// Leeway tolerates clock skew on exp and nbf (default 30s).
	Leeway time.Duration
	// JWKSMaxAge is how long a fetched JWKS is used before it is
	// refetched (default 10m); MinRefetch bounds how often an unknown key
	// id may trigger a refetch (default 10s).
	JWKSMaxAge time.Duration
	MinRefetch time.Duration
	// Now is the clock (default time.Now), for tests.
	Now func() time.Time
}

// errToken is a token that does not verify; its message is safe to show
// the caller (it never includes the token).
type errToken struct{ msg string }

func (e errToken) Error() string { return e.msg }

func badToken(format string, args ...any) error { return errToken{fmt.Sprintf(format, args...)} }

// jwtHeader is the JOSE header of a compact JWS.
type jwtHeader struct {
	Alg  string `json:"alg"`
	Kid  string `json:"kid"`
	Crit []any  `json:"crit"`
}

// jwtClaims are the registered claims agentd checks; the tenant and the
// scopes are read from the raw claims.
type jwtClaims struct {
	Iss string          `json:"iss"`
	Sub string          `json:"sub"`
	Aud json.RawMessage `json:"aud"`
	Exp *json.Number    `json:"exp"`
	Nbf *json.Number    `json:"nbf"`
	// Scope is the OAuth 2.0 space-separated form; Scp the array form
	// some issuers use.
	Scope string   `json:"scope"`
	Scp   []string `json:"scp"`
}

// jwtVerifier checks compact JWS tokens.
type jwtVerifier struct {
	opts JWTOptions
	jwks *jwks // nil without a JWKS URL
}

func newJWTVerifier(o JWTOptions) (*jwtVerifier, error) {
	if o.Issuer == "" || o.Audience == "" {
		return nil, errors.New("jwt: issuer and audience are required")
	}
	if len(o.HS256Secret) == 0 && o.JWKSURL == "" {
		return nil, errors.New("jwt: set hs256_secret_env or jwks_url")
	}
	if len(o.HS256Secret) > 0 && len(o.HS256Secret) < 32 {
		return nil, fmt.Errorf("jwt: the HS256 secret is %d bytes; use at least 32", len(o.HS256Secret))
	}
	if o.TenantClaim == "" {
		o.TenantClaim = "tenant"
	}
	if o.Leeway == 0 {
		o.Leeway = 30 * time.Second
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	v := &jwtVerifier{opts: o}
	if o.JWKSURL != "" {
		v.jwks = newJWKS(o.JWKSURL, o.JWKSMaxAge, o.MinRefetch, o.Now)
	}
	return v, nil
}

// looksLikeJWT tells a compact JWS from an opaque API key.
func looksLikeJWT(tok string) bool {
	return strings.HasPrefix(tok, "eyJ") && strings.Count(tok, ".") == 2
}

// verify checks tok's signature and claims and returns its principal.
func (v *jwtVerifier) verify(ctx context.Context, tok string) (Principal, error) {
	h64, rest, ok1 := strings.Cut(tok, ".")
	c64, s64, ok2 := strings.Cut(rest, ".")
	if !ok1 || !ok2 || strings.Contains(s64, ".") {
		return Principal{}, badToken("a token has three dot-separated parts (compact JWS)")
	}
	var h jwtHeader
	if err := decodeSegment(h64, &h); err != nil {
		return Principal{}, badToken("token header: %v", err)
	}
	if len(h.Crit) > 0 {
		return Principal{}, badToken("token header: critical extensions are not supported")
	}
	sig, err := base64.RawURLEncoding.DecodeString(s64)
	if err != nil {
		return Principal{}, badToken("token signature is not base64url")
	}
	if err := v.checkSignature(ctx, h, []byte(tok[:len(h64)+1+len(c64)]), sig); err != nil {
		return Principal{}, err
	}
	raw, err := base64.RawURLEncoding.DecodeString(c64)
	if err != nil {
		return Principal{}, badToken("token claims are not base64url")
	}
	return v.checkClaims(raw)
}

func decodeSegment(seg string, v any) error {
	b, err := base64.RawURLEncoding.DecodeString(seg)
	if err != nil {
		return errors.New("not base64url")
	}
	if err := json.Unmarshal(b, v); err != nil {
		return errors.New("not a JSON object")
	}
	return nil
}

// checkSignature verifies sig over signed with the key alg calls for.
func (v *jwtVerifier) checkSignature(ctx context.Context, h jwtHeader, signed, sig []byte) error {
	switch h.Alg {
	case "HS256":
		if len(v.opts.HS256Secret) == 0 {
			return badToken("HS256 tokens are not accepted here")
		}
		mac := hmac.New(sha256.New, v.opts.HS256Secret)
		mac.Write(signed)
		if !hmac.Equal(mac.Sum(nil), sig) {
			return badToken("token signature does not verify")
		}
		return nil
	case "RS256", "ES256":
		if v.jwks == nil {
			return badToken("%s tokens are not accepted here (no JWKS configured)", h.Alg)
		}
		key, err := v.jwks.key(ctx, h.Kid, h.Alg)
		if err != nil {
			return err
		}
		digest := sha256.Sum256(signed)
		if !verifyWith(key, h.Alg, digest[:], sig) {
			return badToken("token signature does not verify")
		}
		return nil
	}
	return badToken("token algorithm %q is not accepted (HS256, RS256, ES256)", h.Alg)
}

// verifyWith checks a public-key signature; the key's type must match alg.
func verifyWith(key crypto.PublicKey, alg string, digest, sig []byte) bool {
	switch k := key.(type) {
	case *rsa.PublicKey:
		return alg == "RS256" && rsa.VerifyPKCS1v15(k, crypto.SHA256, digest, sig) == nil
	case *ecdsa.PublicKey:
		if alg != "ES256" || len(sig) != 64 {
			return false
		}
		r, s := new(big.Int).SetBytes(sig[:32]), new(big.Int).SetBytes(sig[32:])
		return ecdsa.Verify(k, digest, r, s)
	}
	return false
}

// checkClaims checks expiry, issuer and audience and maps the claims to a
// principal.
func (v *jwtVerifier) checkClaims(raw []byte) (Principal, error) {
	var c jwtClaims
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	if err := dec.Decode(&c); err != nil {
		return Principal{}, badToken("token claims are not a JSON object of the expected shape")
	}
	now := v.opts.Now()
	exp, ok := numericDate(c.Exp)
	switch {
	case !ok:
		return Principal{}, badToken("token has no valid exp claim")
	case now.After(exp.Add(v.opts.Leeway)):
		return Principal{}, badToken("token expired at %s", exp.UTC().Format(time.RFC3339))
	}
	if nbf, ok := numericDate(c.Nbf); ok && now.Add(v.opts.Leeway).Before(nbf) {
		return Principal{}, badToken("token is not valid before %s", nbf.UTC().Format(time.RFC3339))
	}
	if c.Iss != v.opts.Issuer {
		return Principal{}, badToken("token issuer %q is not the expected %q", c.Iss, v.opts.Issuer)
	}
	if !hasAudience(c.Aud, v.opts.Audience) {
		return Principal{}, badToken("token audience does not include %q", v.opts.Audience)
	}
	tenant, err := stringClaim(raw, v.opts.TenantClaim)
	if err != nil {
		return Principal{}, err
	}
	scopes := knownScopes(append(strings.Fields(c.Scope), c.Scp...))
	return Principal{Name: c.Sub, Tenant: tenant, Scopes: scopes, Method: "jwt"}, nil
}

func numericDate(n *json.Number) (time.Time, bool) {
	if n == nil {
		return time.Time{}, false
	}
	f, err := n.Float64()
	if err != nil || f < 0 || f > 1e11 {
		return time.Time{}, false
	}
	return time.Unix(int64(f), 0), true
}

// hasAudience reports whether aud (a string or an array of strings)
// names want.
func hasAudience(aud json.RawMessage, want string) bool {
	var one string
	if json.Unmarshal(aud, &one) == nil {
		return one == want
	}
	var many []string
	if json.Unmarshal(aud, &many) == nil {
		for _, a := range many {
			if a == want {
				return true
			}
		}
	}
	return false
}

// stringClaim returns the non-empty string claim name of raw.
func stringClaim(raw []byte, name string) (string, error) {
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return "", badToken("token claims are not a JSON object")
	}
	var s string
	if err := json.Unmarshal(all[name], &s); err != nil || s == "" {
		return "", badToken("token has no %q claim naming its tenant", name)
	}
	return s, nil
}
