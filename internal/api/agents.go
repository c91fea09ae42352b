package api

import (
	"net/http"

	"agentd/internal/agent"
	"agentd/internal/runtime"
)

// AgentView is an agent as the API lists it.
type AgentView struct {
	ID          string        `json:"id"`
	Name        string        `json:"name"`
	Description string        `json:"description,omitempty"`
	Skills      []agent.Skill `json:"skills,omitempty"`
	Tools       []string      `json:"tools,omitempty"`
	// Engine names the engine that runs the agent: loop, graph, flow,
	// remote or conformance.
	Engine string `json:"engine,omitempty"`
	// InputModes are the media types the agent accepts in a message's
	// parts (the card's defaultInputModes).
	InputModes []string `json:"input_modes,omitempty"`
	Multitask  string   `json:"multitask"`
	// CardURL is where the agent's A2A card is served.
	CardURL string `json:"card_url"`
	// AGUIURL and AISDKURL are the agent's endpoints in the UI protocols
	// (internal/agui).
	AGUIURL  string `json:"ag_ui_url"`
	AISDKURL string `json:"ai_sdk_url"`
}

// AgentList is the answer of GET /v1/agents. The list is short and comes in
// one page; next_cursor is always empty and exists for symmetry with the
// other lists.
type AgentList struct {
	Agents     []AgentView `json:"agents"`
	NextCursor string      `json:"next_cursor"`
}

func agentView(a *runtime.Agent) AgentView {
	mt := string(a.Multitask)
	if mt == "" {
		mt = string(runtime.MultitaskReject)
	}
	name := a.Card.Name
	if name == "" {
		name = a.ID
	}
	return AgentView{
		ID: a.ID, Name: name, Description: a.Card.Description, Skills: a.Card.Skills,
		Tools: a.Tools, Engine: a.EngineKind, InputModes: a.Card.DefaultInputModes, Multitask: mt,
		CardURL: "/agents/" + a.ID + "/.well-known/agent-card.json",
		AGUIURL: "/ag-ui/agents/" + a.ID, AISDKURL: "/ai-sdk/agents/" + a.ID + "/chat",
	}
}

func (s *Server) listAgents(w http.ResponseWriter, _ *http.Request) {
	out := AgentList{Agents: []AgentView{}}
	for _, a := range s.rt.Agents() {
		out.Agents = append(out.Agents, agentView(a))
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) getAgent(w http.ResponseWriter, r *http.Request) {
	id, err := pathParam(r, "agentID")
	if err != nil {
		writeError(w, r, err)
		return
	}
	a, err := s.rt.Agent(id)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, agentView(a))
}
