package auth

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// BenchmarkAuthenticate is the cost each authenticated request pays, by
// credential kind (the JWKS key is cached after the first token).
func BenchmarkAuthenticate(b *testing.B) {
	t := &testing.T{}
	hs := signer{alg: "HS256", secret: testSecret}
	rs, es := rsaSigner(t, "rs"), ecSigner(t, "es")
	jw := newJWKSServerB(b, rs, es)
	keys := keyOptions().APIKeys
	for i := 0; i < 8; i++ { // a deployment with ten keys
		keys = append(keys, APIKey{Name: "k" + string(rune('a'+i)), Tenant: "t", Scopes: []Scope{RunsRead}, Key: "padding-key-0123456789-" + string(rune('a'+i))})
	}
	a, err := New(Options{APIKeys: keys, JWT: &JWTOptions{Issuer: testIssuer, Audience: testAudience,
		HS256Secret: testSecret, JWKSURL: jw.URL, JWKSMaxAge: time.Hour}})
	if err != nil {
		b.Fatal(err)
	}
	c := claims(nil)
	for _, k := range []struct{ name, header, value string }{
		{"api-key", "X-API-Key", keyAcme},
		{"hs256", "Authorization", "Bearer " + hs.token(t, c)},
		{"rs256", "Authorization", "Bearer " + rs.token(t, c)},
		{"es256", "Authorization", "Bearer " + es.token(t, c)},
	} {
		b.Run(k.name, func(b *testing.B) {
			r := httptest.NewRequest(http.MethodGet, "/v1/runs", nil)
			r.Header.Set(k.header, k.value)
			b.ReportAllocs()
			for b.Loop() {
				if _, err := a.Authenticate(context.Background(), r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func newJWKSServerB(b *testing.B, keys ...signer) *jwksServer {
	t := &testing.T{}
	j := newJWKSServer(t, keys...)
	b.Cleanup(j.Close)
	return j
}
