package engine

import (
	"strconv"
	"strings"
)

// The engine.Run.Attributes keys a host sets for the engine: the agent
// that runs and the run's id.
const (
	AttrAgentID = "agent_id"
	AttrRunID   = "run_id"
)

// Step-actor suffixes of the engines' private conventions.
const (
	nodeSep = ".node."
	iterSep = ".iter"
)

// NodeActor returns the step actor of a graph node: "<agent>.node.<node>".
func NodeActor(agentID, nodeID string) string { return agentID + nodeSep + nodeID }

// IterActor returns the step actor of a loop iteration: "<agent>.iter<n>".
func IterActor(agentID string, n int) string { return agentID + iterSep + strconv.Itoa(n) }

// ParseStepActor splits a step actor into the agent id — everything
// before a ".node." or ".iter<N>" suffix — and the node id of the
// "<agent>.node.<node>" form (empty otherwise).
func ParseStepActor(stepActor string) (agentID, nodeID string) {
	agentID = stepActor
	if i := strings.Index(stepActor, nodeSep); i >= 0 {
		agentID, nodeID = stepActor[:i], stepActor[i+len(nodeSep):]
		if j := iterSuffix(nodeID); j >= 0 {
			nodeID = nodeID[:j]
		}
		return agentID, nodeID
	}
	if j := iterSuffix(stepActor); j >= 0 {
		agentID = stepActor[:j]
	}
	return agentID, ""
}

// iterSuffix returns the index of a ".iter<digits>" suffix in s, or -1.
func iterSuffix(s string) int {
	for from := 0; ; {
		i := strings.Index(s[from:], iterSep)
		if i < 0 {
			return -1
		}
		i += from
		rest := s[i+len(iterSep):]
		digits := len(rest) - len(strings.TrimLeft(rest, "0123456789"))
		if digits > 0 && (digits == len(rest) || rest[digits] == '.') {
			return i
		}
		from = i + 1
	}
}
