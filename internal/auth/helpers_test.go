package auth

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/hmac"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
)

var b64 = base64.RawURLEncoding

// signer makes test tokens with one algorithm and key.
type signer struct {
	alg    string
	kid    string
	secret []byte
	rsa    *rsa.PrivateKey
	ec     *ecdsa.PrivateKey
}

func (s signer) token(t *testing.T, claims map[string]any) string {
	t.Helper()
	h := map[string]any{"alg": s.alg, "typ": "JWT"}
	if s.kid != "" {
		h["kid"] = s.kid
	}
	hj, _ := json.Marshal(h)
	cj, _ := json.Marshal(claims)
	signed := b64.EncodeToString(hj) + "." + b64.EncodeToString(cj)
	digest := sha256.Sum256([]byte(signed))
	var sig []byte
	switch s.alg {
	case "HS256":
		m := hmac.New(sha256.New, s.secret)
		m.Write([]byte(signed))
		sig = m.Sum(nil)
	case "RS256":
		var err error
		if sig, err = rsa.SignPKCS1v15(rand.Reader, s.rsa, crypto.SHA256, digest[:]); err != nil {
			t.Fatal(err)
		}
	case "ES256":
		r, ss, err := ecdsa.Sign(rand.Reader, s.ec, digest[:])
		if err != nil {
			t.Fatal(err)
		}
		sig = append(r.FillBytes(make([]byte, 32)), ss.FillBytes(make([]byte, 32))...)
	case "none":
	}
	return signed + "." + b64.EncodeToString(sig)
}

// sign is the base64url HS256 signature of signed.
func (s signer) sign(signed string) string {
	m := hmac.New(sha256.New, s.secret)
	m.Write([]byte(signed))
	return b64.EncodeToString(m.Sum(nil))
}

func rsaSigner(t *testing.T, kid string) signer {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	return signer{alg: "RS256", kid: kid, rsa: k}
}

func ecSigner(t *testing.T, kid string) signer {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return signer{alg: "ES256", kid: kid, ec: k}
}

// jwk is s's public key as a JWKS entry.
func (s signer) jwk() map[string]any {
	switch s.alg {
	case "RS256":
		return map[string]any{"kty": "RSA", "kid": s.kid, "use": "sig", "alg": "RS256",
			"n": b64.EncodeToString(s.rsa.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(s.rsa.E)).Bytes())}
	case "ES256":
		b, _ := s.ec.PublicKey.Bytes() // 0x04 || x || y
		return map[string]any{"kty": "EC", "kid": s.kid, "crv": "P-256",
			"x": b64.EncodeToString(b[1:33]), "y": b64.EncodeToString(b[33:])}
	}
	return nil
}

// jwksServer is an issuer's JWKS endpoint on loopback whose keys the test
// rotates; it counts the fetches.
type jwksServer struct {
	*httptest.Server
	mu      sync.Mutex
	keys    []signer
	fetches atomic.Int64
}

func newJWKSServer(t *testing.T, keys ...signer) *jwksServer {
	j := &jwksServer{keys: keys}
	j.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		j.fetches.Add(1)
		j.mu.Lock()
		var doc struct {
			Keys []map[string]any `json:"keys"`
		}
		for _, k := range j.keys {
			doc.Keys = append(doc.Keys, k.jwk())
		}
		j.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(doc)
	}))
	t.Cleanup(j.Close)
	return j
}

func (j *jwksServer) rotate(keys ...signer) {
	j.mu.Lock()
	j.keys = keys
	j.mu.Unlock()
}
