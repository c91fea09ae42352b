package agentproto

import "strings"

// A hand-off streams as a LangGraph subgraph: the target's events follow
// the handoff event in the run's log (the target runs as a child run of
// the run), and each of them is a frame of namespace "<target>:<child run
// id>" — "updates|assistant:<id>", "messages|assistant:<id>" with
// stream_subgraphs; without, the messages modes and events carry the
// namespace in their metadata (langgraph_checkpoint_ns) and the rest is
// not sent, as for a workflow's steps. The target's answer is the run's:
// its messages join the run's values, and each also updates the target's
// node at the root (updates {assistant: {messages: […]}}), as a LangGraph
// parent's state takes a subgraph's messages.

// handoffInfo is the hand-off later actors act in.
type handoffInfo struct {
	from string   // the actor that handed off, which stays where it was
	node string   // the target, as the root's node
	ns   []string // the target's namespace, under the hand-off's own
}

// handoffTo enters the hand-off d: every actor but the one that handed
// off acts in the target's subgraph from now on.
func (t *translator) handoffTo(d logData) {
	if d.ChildRunID == "" {
		return
	}
	from := t.actor(d.From)
	node := handoffNode(d.To)
	h := &handoffInfo{from: d.From, node: node, ns: append(append([]string{}, from.ns...), node+":"+d.ChildRunID)}
	if from.up != "" {
		h.node = from.up // a hand-off inside a hand-off updates the outer target's node
	}
	t.handoff = h
	for actor := range t.actors {
		if actor != d.From {
			delete(t.actors, actor)
		}
	}
}

// handoffNode names a hand-off's target as a node: a local agent's id, or
// the agent id of a peer's card URL (".../agents/echo/.well-known/…").
func handoffNode(to string) string {
	if i := strings.Index(to, "/agents/"); i >= 0 {
		if id, _, _ := strings.Cut(to[i+len("/agents/"):], "/"); id != "" {
			return id
		}
	}
	if strings.ContainsAny(to, "/:") {
		return "handoff"
	}
	return to
}
