package engine

import (
	"strings"
)

// The engine.Run.Attributes keys a host sets for the engine: the agent
// that runs and the run's id.
const (
	AttrAgentID = "agent_id"
	AttrRunID   = "run_id"
)

// nodeSep joins a graph node to its agent in a step actor.
const nodeSep = ".node."

// NodeActor returns the step actor of a graph node: "<agent>.node.<node>".
func NodeActor(agentID, nodeID string) string { return agentID + nodeSep + nodeID }

// ParseStepActor splits a step actor into the agent id — everything
// before a ".node." — and the node id after it (empty without one).
func ParseStepActor(stepActor string) (agentID, nodeID string) {
	agentID, nodeID, _ = strings.Cut(stepActor, nodeSep)
	return agentID, nodeID
}
