package auth

import (
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"math/big"
	"net/http"
	"sync"
	"time"
)

// jwks caches the public keys of a JWKS URL. A key id it does not know
// triggers a refetch — that is how a rotated-in key is found — but at most
// once per minRefetch; a stale set is refetched on use, and kept if the
// refetch fails.
type jwks struct {
	url                string
	maxAge, minRefetch time.Duration
	now                func() time.Time
	client             *http.Client

	fetchMu sync.Mutex // one fetch at a time; taken before mu
	mu      sync.Mutex // guards the fields below
	keys    map[string]jwk
	fetched time.Time // last successful fetch
	tried   time.Time // last attempt
}

// jwk is one usable public key.
type jwk struct {
	alg string // "RS256" or "ES256"
	key crypto.PublicKey
}

func newJWKS(url string, maxAge, minRefetch time.Duration, now func() time.Time) *jwks {
	if maxAge <= 0 {
		maxAge = 10 * time.Minute
	}
	if minRefetch <= 0 {
		minRefetch = 10 * time.Second
	}
	return &jwks{url: url, maxAge: maxAge, minRefetch: minRefetch, now: now,
		client: &http.Client{Timeout: 10 * time.Second}}
}

// key returns the key kid for alg, fetching the set when it is stale or
// does not have kid. An empty kid matches the only key of alg's type.
func (j *jwks) key(ctx context.Context, kid, alg string) (crypto.PublicKey, error) {
	if k, ok, fresh := j.lookup(kid, alg); ok && fresh {
		return k, nil
	}
	j.refresh(ctx)
	if k, ok, _ := j.lookup(kid, alg); ok {
		return k, nil
	}
	return nil, badToken("token key id %q is not among the issuer's %s keys", kid, alg)
}

func (j *jwks) lookup(kid, alg string) (crypto.PublicKey, bool, bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	fresh := !j.fetched.IsZero() && j.now().Sub(j.fetched) < j.maxAge
	if kid != "" {
		k, ok := j.keys[kid]
		return k.key, ok && k.alg == alg, fresh
	}
	var found crypto.PublicKey
	n := 0
	for _, k := range j.keys {
		if k.alg == alg {
			found, n = k.key, n+1
		}
	}
	return found, n == 1, fresh
}

// refresh refetches the set unless another attempt happened within
// minRefetch. Failures keep the keys held and are not the caller's
// fault: the token is answered as unverifiable.
func (j *jwks) refresh(ctx context.Context) {
	j.fetchMu.Lock()
	defer j.fetchMu.Unlock()
	j.mu.Lock()
	recent := !j.tried.IsZero() && j.now().Sub(j.tried) < j.minRefetch
	j.mu.Unlock()
	if recent {
		return
	}
	keys, err := j.fetch(ctx)
	j.mu.Lock()
	defer j.mu.Unlock()
	j.tried = j.now()
	if err != nil {
		return
	}
	j.keys, j.fetched = keys, j.tried
}

func (j *jwks) fetch(ctx context.Context) (map[string]jwk, error) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: HTTP %d", resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return nil, err
	}
	return parseJWKS(body)
}

// rawJWK is a JSON Web Key (RFC 7517) as served.
type rawJWK struct {
	Kty string `json:"kty"`
	Kid string `json:"kid"`
	Use string `json:"use"`
	Alg string `json:"alg"`
	N   string `json:"n"`
	E   string `json:"e"`
	Crv string `json:"crv"`
	X   string `json:"x"`
	Y   string `json:"y"`
}

// parseJWKS keeps the signing keys agentd can use (RSA ≥ 2048 bits, EC
// P-256) and skips the others.
func parseJWKS(body []byte) (map[string]jwk, error) {
	var doc struct {
		Keys []rawJWK `json:"keys"`
	}
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	keys := map[string]jwk{}
	for i, k := range doc.Keys {
		if k.Use != "" && k.Use != "sig" {
			continue
		}
		parsed, ok := k.parse()
		if !ok || (k.Alg != "" && k.Alg != parsed.alg) {
			continue
		}
		kid := k.Kid
		if kid == "" {
			kid = fmt.Sprintf("#%d", i)
		}
		keys[kid] = parsed
	}
	return keys, nil
}

func (k rawJWK) parse() (jwk, bool) {
	dec := base64.RawURLEncoding.DecodeString
	switch k.Kty {
	case "RSA":
		n, err1 := dec(k.N)
		e, err2 := dec(k.E)
		if err1 != nil || err2 != nil || len(e) == 0 || len(e) > 4 {
			return jwk{}, false
		}
		pub := &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}
		if pub.N.BitLen() < 2048 || pub.E < 3 {
			return jwk{}, false
		}
		return jwk{alg: "RS256", key: pub}, true
	case "EC":
		x, err1 := dec(k.X)
		y, err2 := dec(k.Y)
		if k.Crv != "P-256" || err1 != nil || err2 != nil || len(x) != 32 || len(y) != 32 {
			return jwk{}, false
		}
		pub, err := ecdsa.ParseUncompressedPublicKey(elliptic.P256(), append(append([]byte{4}, x...), y...))
		if err != nil {
			return jwk{}, false
		}
		return jwk{alg: "ES256", key: pub}, true
	}
	return jwk{}, false
}
