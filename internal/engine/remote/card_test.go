package remote

import (
	"strings"
	"testing"

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
