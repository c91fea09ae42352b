package main

import (
	"bufio"
	"net/http"
	"slices"
	"testing"
)

// TestDemoRelay is the README's federation example: the demo's relay agent
// reaches this server's own echo agent through its A2A card (a path,
// resolved against the address the server listens on) and streams echo's
// answer, token by token, into its own run.
func TestDemoRelay(t *testing.T) {
	s := start(t)

	t.Run("blocking", func(t *testing.T) {
		v := readJSON[runJSON](t, s.post(t, "/v1/agents/relay/messages", `{"text": "hello through a peer"}`), http.StatusOK)
		last := v.Messages[len(v.Messages)-1]
		if v.Status != "completed" || last.Role != "assistant" || last.Parts[0].Text != "hello through a peer" {
			t.Fatalf("run %+v", v)
		}
	})

	t.Run("stream", func(t *testing.T) {
		res := s.post(t, "/v1/agents/relay/messages?stream=true", `{"text":"stream 20 every 20ms"}`)
		defer res.Body.Close()
		evs := readUntilEnd(t, bufio.NewReader(res.Body))
		checkSeqs(t, evs)
		if got := deltas(evs); !slices.Equal(got, toks(20)) {
			t.Fatalf("tokens %v", got)
		}
		n := 0
		for _, ev := range evs {
			if ev.typ == "delta" {
				n++
			}
		}
		if n < 2 {
			t.Fatalf("%d delta events: the answer was not streamed", n)
		}
	})
}

// TestDemoRelayCard: the card served for the relay takes echo's skills and
// modes, under the relay's own URLs.
func TestDemoRelayCard(t *testing.T) {
	s := start(t)
	card := readJSON[struct {
		Skills []struct {
			ID string `json:"id"`
		} `json:"skills"`
		SupportedInterfaces []struct {
			URL string `json:"url"`
		} `json:"supportedInterfaces"`
	}](t, s.get(t, "/agents/relay/.well-known/agent-card.json"), http.StatusOK)
	if len(card.Skills) != 1 || card.Skills[0].ID != "echo" {
		t.Fatalf("skills %+v, want echo's", card.Skills)
	}
	if len(card.SupportedInterfaces) == 0 || card.SupportedInterfaces[0].URL != s.base+"/agents/relay/jsonrpc" {
		t.Fatalf("interfaces %+v", card.SupportedInterfaces)
	}
}
