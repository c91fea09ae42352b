package a2a

import (
	"context"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// An agent's card lists its published assistants (stored assistants whose
// metadata has "published": true) as skills of its own, after the
// configured ones: skill id "assistant:<id>", the assistant's name and
// description, tags [agent id, "assistant"]. One card per agent keeps
// every A2A URL as it is; a client picks a skill by sending the message
// with request metadata {"assistant_id": "<id>"}, which runs it on the
// assistant's latest version. Assistants are a tenant's: the card, served
// to anyone, lists those of the request's tenant, which for the
// unauthenticated card route is the default tenant; another tenant's
// never show.

// MetaAssistantID is the request metadata key that names the assistant a
// message runs on.
const MetaAssistantID = "assistant_id"

// maxAssistantSkills bounds the assistants one card lists.
const maxAssistantSkills = 100

// assistantWait bounds the store read; past it, or when the store keeps
// no assistants, the card is served without them.
const assistantWait = time.Second

// addAssistantSkills appends agent a's published assistants to card.
func (s *Server) addAssistantSkills(ctx context.Context, a *runtime.Agent, card *a2a.AgentCard) {
	ctx, cancel := context.WithTimeout(ctx, assistantWait)
	defer cancel()
	page, _, err := s.rt.SearchAssistants(ctx, run.AssistantQuery{
		AgentID: a.ID, Metadata: map[string]any{"published": true}, Limit: maxAssistantSkills,
	})
	if err != nil {
		return
	}
	for _, as := range page {
		card.Skills = append(card.Skills, a2a.AgentSkill{
			ID: "assistant:" + as.ID, Name: nonEmpty(as.Name, as.ID),
			Description: nonEmpty(as.Description, "Assistant "+nonEmpty(as.Name, as.ID)+" of agent "+a.ID+
				`: send with request metadata {"assistant_id": "`+as.ID+`"}`),
			Tags: []string{a.ID, "assistant"},
		})
	}
}

// assistantOf is the assistant a request's metadata names, "" for none.
func assistantOf(md map[string]any) string {
	id, _ := md[MetaAssistantID].(string)
	return id
}
