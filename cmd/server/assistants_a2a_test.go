package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"
)

// cardSkills are the skill ids of agent's public card.
func cardSkills(t *testing.T, s *server, agent string) []string {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), s.base+"/agents/"+agent)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, sk := range card.Skills {
		ids = append(ids, sk.ID)
	}
	return ids
}

// TestAssistantsOverA2A: a2a-go's client reads a published assistant as a
// skill of its agent's card (an unpublished one is not listed) and runs
// on it by naming it in the request's metadata; an unknown one is invalid
// params.
func TestAssistantsOverA2A(t *testing.T) {
	s := start(t)
	var ada, draft assistantView
	s.call(t, "", "POST", "/v1/assistants", `{"agent_id":"assistant","name":"ada","context":{"system_prompt":"You are Ada."},"metadata":{"published":true}}`).json(t, &ada)
	s.call(t, "", "POST", "/v1/assistants", `{"agent_id":"assistant","name":"draft"}`).json(t, &draft)
	skills := strings.Join(cardSkills(t, s, "assistant"), " ")
	if !strings.Contains(skills, "assistant:"+ada.ID) || strings.Contains(skills, draft.ID) || !strings.Contains(skills, "time") {
		t.Fatalf("card skills %s: want the configured ones and assistant:%s only", skills, ada.ID)
	}
	if echo := strings.Join(cardSkills(t, s, "echo"), " "); strings.Contains(echo, "assistant:") {
		t.Fatalf("another agent's card lists the assistant: %s", echo)
	}
	c := s.a2aClient(t, "assistant", "", a2a.TransportProtocolJSONRPC, "/jsonrpc")
	res, err := c.SendMessage(t.Context(), &a2a.SendMessageRequest{
		Message:  a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("who are you?")),
		Metadata: map[string]any{"assistant_id": ada.ID},
	})
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := json.Marshal(res); !strings.Contains(string(b), "My instructions: You are Ada.") {
		t.Fatalf("answer on the assistant: %s", b)
	}
	_, err = c.SendMessage(t.Context(), &a2a.SendMessageRequest{
		Message:  a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart("who are you?")),
		Metadata: map[string]any{"assistant_id": "nope"},
	})
	if err == nil || !strings.Contains(err.Error(), "metadata.assistant_id") {
		t.Fatalf("an unknown assistant: %v, want invalid params naming metadata.assistant_id", err)
	}
}

// TestAssistantsCardTenancy: the public card, which no tenant reads,
// lists no tenant's assistants.
func TestAssistantsCardTenancy(t *testing.T) {
	s := startWithAuth(t, "", authYAML)
	var a assistantView
	s.call(t, acmeKey, "POST", "/v1/assistants", `{"agent_id":"assistant","name":"ada","metadata":{"published":true}}`).json(t, &a)
	if a.ID == "" {
		t.Fatal("not created")
	}
	if skills := strings.Join(cardSkills(t, s, "assistant"), " "); strings.Contains(skills, a.ID) {
		t.Fatalf("the public card lists acme's assistant: %s", skills)
	}
}
