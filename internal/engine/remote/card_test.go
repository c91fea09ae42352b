package remote

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2acompat/a2av0"
)

func TestParseCard(t *testing.T) {
	for _, c := range []struct {
		name, json string
		want       a2a.AgentInterface
	}{
		{"v1.0", `{"name":"p","supportedInterfaces":[{"url":"https://p.example/rest","protocolBinding":"HTTP+JSON","protocolVersion":"1.0"}]}`,
			a2a.AgentInterface{URL: "https://p.example/rest", ProtocolBinding: a2a.TransportProtocolHTTPJSON, ProtocolVersion: a2a.Version}},
		{"v0.3", `{"name":"p","url":"https://p.example/rpc","preferredTransport":"JSONRPC","protocolVersion":"0.3.0"}`,
			a2a.AgentInterface{URL: "https://p.example/rpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2av0.Version}},
	} {
		t.Run(c.name, func(t *testing.T) {
			card, err := parseCard([]byte(c.json))
			if err != nil {
				t.Fatal(err)
			}
			got := card.SupportedInterfaces[0]
			if got.URL != c.want.URL || got.ProtocolBinding != c.want.ProtocolBinding || !strings.HasPrefix(string(got.ProtocolVersion), string(c.want.ProtocolVersion)) {
				t.Fatalf("interface %+v, want %+v", *got, c.want)
			}
		})
	}
	if _, err := parseCard([]byte(`{"name":"p"}`)); err == nil {
		t.Fatal("a card without interfaces parsed")
	}
}

// TestCardCacheRevalidates: a fresh card is served from the cache; a stale
// one is revalidated with its ETag, and a 304 keeps it.
func TestCardCacheRevalidates(t *testing.T) {
	const body = `{"name":"p","supportedInterfaces":[{"url":"https://p.example/rpc","protocolBinding":"JSONRPC","protocolVersion":"1.0"}]}`
	var fetches, revalidations int
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("If-None-Match") == `"v1"` {
			revalidations++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		fetches++
		w.Header().Set("ETag", `"v1"`)
		_, _ = w.Write([]byte(body))
	}))
	defer srv.Close()
	now := time.Unix(0, 0)
	c := &cardCache{client: srv.Client(), ttl: time.Minute, now: func() time.Time { return now }}
	for i, advance := range []time.Duration{0, 30 * time.Second, 31 * time.Second, 0} {
		now = now.Add(advance)
		card, err := c.get(context.Background(), srv.URL)
		if err != nil || card.Name != "p" {
			t.Fatalf("get %d: %v %v", i, card, err)
		}
	}
	if fetches != 1 || revalidations != 1 {
		t.Fatalf("%d fetches, %d revalidations; want 1 and 1", fetches, revalidations)
	}
}
