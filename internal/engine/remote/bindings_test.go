package remote_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
)

// TestEveryBinding streams through each interface a peer may offer alone:
// the card is narrowed to one binding (a v1.0 interface, or only the v0.3
// fields, which a2a-go's compatibility parser reads).
func TestEveryBinding(t *testing.T) {
	p := newPeer(t)
	for _, c := range []struct {
		name  string
		keep  func(card map[string]any)
		proto string
	}{
		{"jsonrpc-1.0", only("JSONRPC"), "JSONRPC"},
		{"rest-1.0", only("HTTP+JSON"), "HTTP+JSON"},
		{"jsonrpc-0.3", v03("JSONRPC"), "JSONRPC"},
		{"rest-0.3", v03("HTTP+JSON"), "HTTP+JSON"},
	} {
		t.Run(c.name, func(t *testing.T) {
			e := newEngine(t, narrowCard(t, p.cardURL("echo"), c.keep))
			h := enginetest.NewRecordingHost()
			b, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, h, boardWith("stream 10"))
			if err != nil {
				t.Fatal(err)
			}
			if got := joined(tokens(t, h, "r1")); got != wantText(10) || lastAnswer(b) != wantText(10) {
				t.Fatalf("tokens %q, answer %q", got, lastAnswer(b))
			}
		})
	}
}

// only keeps the v1.0 interface of binding proto and drops the v0.3 fields.
func only(proto string) func(map[string]any) {
	return func(card map[string]any) {
		var kept []any
		for _, i := range card["supportedInterfaces"].([]any) {
			m := i.(map[string]any)
			if m["protocolBinding"] == proto && m["protocolVersion"] == "1.0" {
				kept = append(kept, m)
			}
		}
		card["supportedInterfaces"] = kept
		delete(card, "url")
		delete(card, "preferredTransport")
		delete(card, "additionalInterfaces")
	}
}

// v03 leaves a v0.3 card offering binding proto alone.
func v03(proto string) func(map[string]any) {
	return func(card map[string]any) {
		var url string
		for _, i := range card["supportedInterfaces"].([]any) {
			m := i.(map[string]any)
			if m["protocolBinding"] == proto {
				url, _ = m["url"].(string)
			}
		}
		delete(card, "supportedInterfaces")
		delete(card, "additionalInterfaces")
		card["url"], card["preferredTransport"], card["protocolVersion"] = url, proto, "0.3.0"
	}
}

// narrowCard serves the card at cardURL rewritten by keep.
func narrowCard(t *testing.T, cardURL string, keep func(map[string]any)) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(cardURL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		var card map[string]any
		if err := json.Unmarshal(b, &card); err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		keep(card)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(card)
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/agent-card.json"
}
