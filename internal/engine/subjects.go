package engine

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"agentd/internal/event"
)

// The subject schema every engine follows, so that consumers (SSE bridges,
// the runtime's event log, dashboards) route on subjects without knowing
// which engine produced an event:
//
//	engine.run.<run>.start                       run lifecycle (engine)
//	engine.run.<run>.end
//	engine.run.<run>.step.<actor>.start          step lifecycle (engine)
//	engine.run.<run>.step.<actor>.complete
//	engine.run.<run>.step.<actor>.error
//	engine.run.<run>.stream.<actor>.delta        in-flight increments (engine)
//	engine.run.<run>.status                      state changes (runtime)
//	engine.run.<run>.input                       input required (runtime)
//	engine.run.<run>.artifact                    artifacts (runtime)
//
// <actor>, the step actor, starts with the executing agent's id and may
// carry an engine-private suffix: ".node.<id>" for a graph node,
// ".iter<N>" for a loop iteration (see NodeActor, IterActor). Every
// fragment passes through SanitiseID, which folds the whole actor into one
// token; agent-level routing therefore uses the envelope's AgentID and
// NodeID fields, which the publishing helpers fill from the raw actor.

// SubjectPrefix is the root of every engine subject.
const SubjectPrefix = "engine.run."

// SanitiseID makes id safe as one subject token: '.', '*' and '>' (token
// separator and wildcards) and ASCII whitespace become '_', and an empty id
// becomes "_" so subjects keep a constant token count. Ids that need no
// change are returned without allocating.
func SanitiseID(id string) string {
	if id == "" {
		return "_"
	}
	// Every unsafe rune is ASCII, and UTF-8 never uses an ASCII byte
	// inside another rune, so looking at bytes finds exactly them.
	if !hasUnsafeSubjectByte(id) {
		return id
	}
	return strings.Map(func(r rune) rune {
		if unsafeSubjectRune(r) {
			return '_'
		}
		return r
	}, id)
}

func hasUnsafeSubjectByte(id string) bool {
	for i := 0; i < len(id); i++ {
		if unsafeSubjectByte[id[i]] {
			return true
		}
	}
	return false
}

func unsafeSubjectRune(r rune) bool {
	return r >= 0 && r < utf8.RuneSelf && unsafeSubjectByte[r]
}

// unsafeSubjectByte marks the characters SanitiseID replaces, all ASCII.
var unsafeSubjectByte = [256]bool{'.': true, '*': true, '>': true, ' ': true, '\t': true, '\n': true, '\r': true, '\v': true, '\f': true}

func runSubject(runID, suffix string) event.Subject {
	return event.Subject(SubjectPrefix + SanitiseID(runID) + suffix)
}

func actorSubject(runID, kind, stepActor, verb string) event.Subject {
	return event.Subject(SubjectPrefix + SanitiseID(runID) + "." + kind + "." + SanitiseID(stepActor) + "." + verb)
}

// SubjectRunStart is published exactly once when Execute begins:
// engine.run.<run>.start.
func SubjectRunStart(runID string) event.Subject { return runSubject(runID, ".start") }

// SubjectRunEnd is published exactly once when Execute returns, whatever
// the outcome: engine.run.<run>.end.
func SubjectRunEnd(runID string) event.Subject { return runSubject(runID, ".end") }

// SubjectRunStatus carries the runtime's state changes of a run:
// engine.run.<run>.status.
func SubjectRunStatus(runID string) event.Subject { return runSubject(runID, ".status") }

// SubjectRunInput carries the runtime's input-required prompts:
// engine.run.<run>.input.
func SubjectRunInput(runID string) event.Subject { return runSubject(runID, ".input") }

// SubjectRunArtifact carries the runtime's artifact updates:
// engine.run.<run>.artifact.
func SubjectRunArtifact(runID string) event.Subject { return runSubject(runID, ".artifact") }

// SubjectStepStart is published when a step begins:
// engine.run.<run>.step.<actor>.start.
func SubjectStepStart(runID, stepActor string) event.Subject {
	return actorSubject(runID, "step", stepActor, "start")
}

// SubjectStepComplete is published when a step succeeds:
// engine.run.<run>.step.<actor>.complete.
func SubjectStepComplete(runID, stepActor string) event.Subject {
	return actorSubject(runID, "step", stepActor, "complete")
}

// SubjectStepError is published when a step fails:
// engine.run.<run>.step.<actor>.error.
func SubjectStepError(runID, stepActor string) event.Subject {
	return actorSubject(runID, "step", stepActor, "error")
}

// SubjectStreamDelta carries one in-flight increment (a token, a tool call,
// a tool result) of a step: engine.run.<run>.stream.<actor>.delta. Its
// payload is a StreamDeltaPayload.
func SubjectStreamDelta(runID, stepActor string) event.Subject {
	return actorSubject(runID, "stream", stepActor, "delta")
}

// IsStreamDelta reports whether s is a stream-delta subject, by string
// shape only, so consumers can filter before decoding payloads.
func IsStreamDelta(s event.Subject) bool {
	str := string(s)
	return strings.HasPrefix(str, SubjectPrefix) && strings.HasSuffix(str, ".delta") &&
		strings.Contains(str[len(SubjectPrefix):], ".stream.")
}

// IsRunEnd reports whether s is a run.end subject.
func IsRunEnd(s event.Subject) bool {
	str := string(s)
	return strings.HasPrefix(str, SubjectPrefix) && strings.HasSuffix(str, ".end") &&
		strings.Count(str[len(SubjectPrefix):], ".") == 1
}

// Step-actor suffixes of the engines' private conventions.
const (
	nodeSep = ".node."
	iterSep = ".iter"
)

// NodeActor returns the step actor of a graph node: "<agent>.node.<node>".
func NodeActor(agentID, nodeID string) string { return agentID + nodeSep + nodeID }

// IterActor returns the step actor of a loop iteration: "<agent>.iter<n>".
func IterActor(agentID string, n int) string { return agentID + iterSep + strconv.Itoa(n) }

// ParseStepActor splits a raw (unsanitised) step actor into the agent id —
// everything before a ".node." or ".iter<N>" suffix — and the node id of
// the "<agent>.node.<node>" form (empty otherwise).
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
