package auth

import (
	"context"
	"strings"
	"testing"
	"time"
)

// FuzzJWT: whatever a caller sends as a bearer token, verification never
// panics and never accepts a token that does not carry a valid HS256
// signature over its own header and claims.
func FuzzJWT(f *testing.F) {
	hs := signer{alg: "HS256", secret: testSecret}
	good := hs.token(&testing.T{}, map[string]any{"iss": testIssuer, "aud": testAudience, "exp": 4102444800, "tenant": "acme", "scope": "admin"})
	for _, s := range []string{good, good[:len(good)-2], "eyJ.eyJ.", "eyJhbGciOiJub25lIn0.e30.", "a.b.c", strings.Repeat(".", 3)} {
		f.Add(s)
	}
	v, err := newJWTVerifier(JWTOptions{Issuer: testIssuer, Audience: testAudience, HS256Secret: testSecret,
		Now: func() time.Time { return time.Unix(1700000000, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, tok string) {
		p, err := v.verify(context.Background(), tok)
		if err != nil {
			if strings.Contains(err.Error(), tok) && len(tok) > 8 {
				t.Fatalf("the error repeats the token: %v", err)
			}
			return
		}
		if p.Tenant == "" {
			t.Fatalf("accepted %q without a tenant", tok)
		}
		h, rest, _ := strings.Cut(tok, ".")
		c, sig, _ := strings.Cut(rest, ".")
		if hs.sign(h+"."+c) != sig {
			t.Fatalf("accepted %q, whose signature is not the HS256 of its content", tok)
		}
	})
}
