package flow

import (
	"time"

	"agentd/internal/engine"
	"agentd/internal/model"
)

// Step kinds of the flow's step events.
const (
	StepKindNode = "node"
	StepKindTool = "tool"
	StepKindUndo = "undo"
)

// ContextArtifactID is the id of the artifact that carries the flow's
// final context.
const ContextArtifactID = "flow-context"

// nodeDetail is the Detail of a node step's events.
type nodeDetail struct {
	Node      string `json:"node"`
	Behaviour string `json:"behaviour"`
	Visit     int    `json:"visit"`
	To        string `json:"to,omitempty"`
	Signal    string `json:"signal,omitempty"`
	// Waiting marks a node left to wait for the user's answer: the run
	// parks, and a resume continues at this node.
	Waiting bool `json:"waiting,omitempty"`
}

// toolDetail is the Detail of a tool or undo step's events.
type toolDetail struct {
	Node           string `json:"node"`
	Tool           string `json:"tool"`
	IdempotencyKey string `json:"idempotency_key"`
	Replay         bool   `json:"replay,omitempty"`
}

// actor is node n's step actor.
func (x *execution) actor(nodeID string) string { return engine.NodeActor(x.agent, nodeID) }

func (x *execution) nodeStep(n *node, d nodeDetail) engine.Step {
	d.Node, d.Behaviour, d.Visit = n.id, n.behaviour, x.st.Visit
	return engine.Step{RunID: x.run.ID, Actor: x.actor(n.id), Kind: StepKindNode, Detail: d}
}

// publish hands ev to the host. Publish errors are observability
// problems, never control flow.
func (x *execution) publish(ev engine.Event) { _ = x.host.Publish(x.ctx, ev) }

func (x *execution) stepStart(n *node) {
	x.publish(engine.StepStarted{Step: x.nodeStep(n, nodeDetail{})})
}

func (x *execution) stepComplete(n *node, d nodeDetail) {
	x.publish(engine.StepCompleted{Step: x.nodeStep(n, d)})
}

func (x *execution) stepError(n *node, err error) {
	x.publish(engine.StepFailed{Step: x.nodeStep(n, nodeDetail{}), Err: err})
}

// render renders node n's content over the context.
func (x *execution) render(n *node) (string, error) {
	if n.content == nil {
		return "", nil
	}
	s, err := n.content.render(x.templateData())
	if err != nil {
		return "", x.failf(n, "content: %v", err)
	}
	return s, nil
}

// say renders node n's content, streams it and appends it to the main
// channel as the agent's message. Empty content says nothing.
func (x *execution) say(n *node) error {
	s, err := x.render(n)
	if err != nil || s == "" {
		return err
	}
	x.publish(engine.Token{Actor: x.actor(n.id), Text: s})
	msg := model.NewText(model.RoleAssistant, s)
	msg.ID = x.e.cfg.NewMessageID()
	msg.CreatedAt = time.Now().UTC()
	msg.Name = x.agent
	x.board.AppendChannelMessage(engine.MainChannel, msg)
	return nil
}

// publishContext publishes the flow's context as the run's data artifact,
// with the path taken in its metadata.
func (x *execution) publishContext() {
	part, err := model.DataPart(x.st.Context)
	if err != nil {
		return
	}
	x.publish(engine.ArtifactUpdate{
		Artifact: model.Artifact{
			ID: ContextArtifactID, Name: "context", Parts: []model.Part{part},
			Metadata: map[string]any{"history": x.st.History, "node": x.st.Node},
		},
		LastChunk: true,
	})
}
