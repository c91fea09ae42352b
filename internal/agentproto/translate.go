package agentproto

import (
	"encoding/json"
	"strconv"
	"strings"

	"agentd/internal/model"
	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// frame is one event of an Agent Protocol stream: its SSE event name
// (a stream mode, with "|namespace…" for subgraphs) and its data.
type frame struct {
	event string
	data  any
}

// runSource reads what a stream shows beyond the log: the values and
// checkpoints of the run once it ended (nil when unavailable).
type runSource interface {
	finalValues() map[string]any
	runStates() []stateJSON
}

// translator turns one run's log events into the frames of the stream
// modes asked for. It is deterministic: replaying a run's events yields
// the same frames, so a stream resumed after a Last-Event-ID replays the
// log and skips what the client had (every frame once).
type translator struct {
	modes     map[string]bool
	subgraphs bool
	threadID  string
	runID     string
	agentID   string
	src       runSource
	// values is the conversation at the run's root so far, seeded with the
	// thread's before the run; extra holds the other state keys.
	values []lcMessage
	extra  map[string]any
	// building holds each actor's model message being streamed; tasks the
	// id of each actor's open step.
	building map[string]*aiBuild
	tasks    map[string]string
	step     int
	attempt  int
	// attemptStart is the time of the attempt's run.start (RFC 3339): the
	// checkpoints it wrote are those not older.
	attemptStart string
	// assistant is the agent's assistant id; actors caches where each
	// actor acts and its chunk metadata at the current step (metaJSON).
	assistant string
	actors    map[string]*actorInfo
	actorLits map[string]string // encoded actor → actor (textDelta)
	// handoff is the hand-off the run's later actors act in (nil before
	// any): see handoffTo.
	handoff *handoffInfo
}

// actorInfo is what the translator derived from an actor path.
type actorInfo struct {
	node string
	ns   []string
	// conv: the actor's messages join the run's conversation (the root's,
	// and a hand-off target's, whose answer is the run's); up is the root
	// node a hand-off target's messages also update ("" for others).
	conv bool
	up   string
	// tuple is the event name of its messages-tuple frames.
	tuple string
	// meta is the encoded metadata of the actor's message chunks at step.
	meta json.RawMessage
	step int
}

type aiBuild struct {
	id   string
	text strings.Builder
	// pending holds tokens not decoded yet: an opening quote and the
	// bodies of their literals (addLiteral, token.go).
	pending   []byte
	calls     []lcToolCall
	announced bool
	// prefix is chunkPrefix(id), made at the message's first token.
	prefix string
}

func newTranslator(modes []string, subgraphs bool, threadID string, run runv.Task, seed []lcMessage, src runSource) *translator {
	set := map[string]bool{}
	for _, m := range modes {
		set[m] = true
	}
	if len(set) == 0 {
		set["values"] = true
	}
	return &translator{
		modes: set, subgraphs: subgraphs, threadID: threadID, runID: run.ID, agentID: run.AgentID, src: src,
		values: append([]lcMessage{}, seed...), extra: map[string]any{}, building: map[string]*aiBuild{}, tasks: map[string]string{},
		assistant: runAssistantID(run), actors: map[string]*actorInfo{}, actorLits: map[string]string{},
	}
}

// logData is the union of the log's event data the translator reads.
type logData struct {
	Actor      string            `json:"actor"`
	Text       string            `json:"text"`
	ToolCall   *model.ToolCall   `json:"tool_call"`
	ToolResult *model.ToolResult `json:"tool_result"`
	Payload    struct {
		Kind   string          `json:"kind"`
		Detail json.RawMessage `json:"detail"`
	} `json:"payload"`
	State    runv.TaskState  `json:"state"`
	Error    *runv.TaskError `json:"error"`
	Prompt   *model.Message  `json:"prompt"`
	Artifact *model.Artifact `json:"artifact"`
	Attempt  int             `json:"attempt"`
	Time     string          `json:"time"`
	// a hand-off's
	From       string `json:"from"`
	To         string `json:"to"`
	ChildRunID string `json:"child_run_id"`
}

// translate returns the frames of one log event.
func (t *translator) translate(ev runv.Event) []frame {
	if ev.Type == runtime.EventDelta {
		if actor, text, ok := runtime.TokenLiterals(ev.Data); ok {
			return t.textDelta(nil, ev.Seq, actor, text)
		}
	}
	if ev.Type == runtime.EventStatus || ev.Type == runtime.EventGap {
		return nil // no frame: the run's states show in run.end and the interrupts
	}
	var d logData
	if err := json.Unmarshal(ev.Data, &d); err != nil {
		return nil
	}
	var out []frame
	switch ev.Type {
	case runtime.EventRunStart:
		t.attempt, t.attemptStart = d.Attempt, d.Time
		if t.modes["values"] || t.modes["events"] {
			out = t.emit(out, "values", nil, t.valuesNow())
			out = t.emit(out, "events", nil, t.lcEvent("on_chain_start", t.agentID, t.runID, map[string]any{"input": t.valuesNow()}))
		}
	case runtime.EventDelta:
		out = t.delta(out, ev.Seq, d)
	case runtime.EventStepStart:
		out = t.stepStart(out, ev.Seq, d)
	case runtime.EventStepComplete, runtime.EventStepError:
		out = t.stepEnd(out, ev.Type == runtime.EventStepError, d)
	case runtime.EventArtifact:
		out = t.artifact(out, d)
	case runtime.EventInput:
		if d.Prompt != nil {
			out = t.interrupt(out, d)
		}
	case runtime.EventRunEnd:
		out = t.runEnd(out, d)
	case runtime.EventHandoff:
		t.handoffTo(d)
		out = t.emit(out, "custom", nil, json.RawMessage(ev.Data))
	default: // plan, progress, signal, governance, compaction
		out = t.emit(out, "custom", nil, json.RawMessage(ev.Data))
	}
	return out
}

// emit appends a frame of mode when the stream asked for it; a frame of
// a subgraph (ns) is sent only with stream_subgraphs, named mode|ns…,
// except the messages modes, whose tokens stream from every level.
func (t *translator) emit(out []frame, mode string, ns []string, data any) []frame {
	if !t.modes[mode] && !(mode == "messages" && t.modes["messages-tuple"]) {
		return out
	}
	name := mode
	if len(ns) > 0 {
		if !t.subgraphs && !strings.HasPrefix(mode, "messages") && mode != "events" {
			return out
		}
		if t.subgraphs {
			name += "|" + strings.Join(ns, "|")
		}
	}
	return append(out, frame{event: name, data: data})
}

// where splits an actor path into the node that acted and the namespaces
// of the subgraphs it acted in ("research_node_plan/planner": node
// planner in research_node_plan).
func (t *translator) where(actor string) (node string, ns []string) {
	a := t.actor(actor)
	return a.node, a.ns
}

func (t *translator) actor(actor string) *actorInfo {
	if a := t.actors[actor]; a != nil {
		return a
	}
	a := &actorInfo{node: t.agentID, step: -1}
	if h := t.handoff; h != nil && actor != h.from {
		a.ns, a.up = append(a.ns, h.ns...), h.node
	}
	if actor != "" {
		segs := strings.Split(actor, "/")
		for _, s := range segs[:len(segs)-1] {
			a.ns = append(a.ns, s+":"+t.runID)
		}
		a.node = segs[len(segs)-1]
		a.conv = len(segs) == 1
	} else {
		a.conv = true
	}
	a.tuple = t.msgEvent("messages", a.ns)
	t.actors[actor] = a
	return a
}

// msgEvent is the event name of a message mode's frame of a subgraph
// (ns): mode|ns… with stream_subgraphs, as LangGraph names them, else
// mode — tokens stream from every level either way.
func (t *translator) msgEvent(mode string, ns []string) string {
	if !t.subgraphs || len(ns) == 0 {
		return mode
	}
	return mode + "|" + strings.Join(ns, "|")
}

// metaJSON is the encoded metadata of actor's message chunks, encoded
// once per step rather than once per token.
func (t *translator) metaJSON(actor string) json.RawMessage {
	a := t.actor(actor)
	if a.step != t.step || a.meta == nil {
		a.meta, _ = json.Marshal(t.meta(a.node, a.ns))
		a.step = t.step
	}
	return a.meta
}

// meta is the metadata of a message chunk.
func (t *translator) meta(node string, ns []string) map[string]any {
	return map[string]any{
		"thread_id": t.threadID, "run_id": t.runID, "graph_id": t.agentID, "assistant_id": t.assistant,
		"langgraph_node": node, "langgraph_step": t.step, "langgraph_checkpoint_ns": strings.Join(ns, "|"), "tags": []string{},
	}
}

func (t *translator) valuesNow() map[string]any {
	v := make(map[string]any, len(t.extra)+1)
	for k, x := range t.extra {
		v[k] = x
	}
	v["messages"] = append([]lcMessage{}, t.values...)
	return v
}

func (t *translator) lcEvent(kind, name, id string, data map[string]any) map[string]any {
	return map[string]any{"event": kind, "name": name, "run_id": id, "tags": []string{}, "metadata": t.meta(name, nil), "data": data, "parent_ids": []string{}}
}

func idAt(runID string, seq int64) string { return "run-" + runID + "-" + strconv.FormatInt(seq, 10) }

// interrupt is a prompt: the question joins the conversation (as the
// thread's transcript holds it) and streams as a message; the interrupt is
// an update and a member of the values.
func (t *translator) interrupt(out []frame, d logData) []frame {
	out = t.finish(out, d.Actor)
	q := toLC(*d.Prompt)
	t.values = append(t.values, q)
	a := t.actor(d.Actor)
	if t.modes["messages-tuple"] {
		out = append(out, frame{event: a.tuple, data: []any{q, t.metaJSON(d.Actor)}})
	}
	if t.modes["messages"] {
		out = append(out, frame{event: t.msgEvent("messages/complete", a.ns), data: []lcMessage{q}})
	}
	intr := promptInterrupts(t.runID, t.attempt, *d.Prompt)
	out = t.emit(out, "updates", nil, map[string]any{"__interrupt__": intr})
	if t.modes["values"] {
		v := t.valuesNow()
		v["__interrupt__"] = intr
		out = t.emit(out, "values", nil, v)
	}
	return out
}
