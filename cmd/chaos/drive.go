package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	agenta2a "agentd/internal/a2a"
)

// runBudget bounds how long a client works on one run before it gives up
// (the check then finds the run stuck).
const runBudget = 2 * time.Minute

// clientRun is what one client did and saw of one run.
type clientRun struct {
	worker int
	a2a    bool
	tool   bool   // a run of the tool-calling agent (effects.go)
	inject string // a deliberate client fault ("drop", "dup")

	key string // the message id (idempotency key)
	// contextID is the client's conversation; empty for half the A2A
	// runs, whose server-made context makes their create ride with the
	// run's first event (a deferred create, runlog.Log.Defer).
	contextID string
	id        string   // the run
	retryIDs  []string // runs that idempotent resends of the message answered
	// seqs are the event seqs the client received, in order (REST: every
	// event; A2A: the seq of every update).
	seqs        []int64
	held        map[a2a.ArtifactID]*a2a.Artifact // A2A: the artifacts as applied
	ended       bool
	disconnects int
}

func (e *env) drive(ctx context.Context, rng *rand.Rand, cr *clientRun, key string) {
	cr.key, cr.contextID = key, "ctx-"+key
	if cr.a2a && rng.IntN(2) == 0 {
		cr.contextID = ""
	}
	ctx, cancel := context.WithTimeout(ctx, runBudget)
	defer cancel()
	if cr.a2a {
		e.driveA2A(ctx, rng, cr)
	} else {
		e.driveREST(ctx, rng, cr)
	}
}

func (cr *clientRun) text(o options) string {
	if cr.tool {
		return fmt.Sprintf("charge %d", 1+cr.worker)
	}
	return fmt.Sprintf("stream %d every %dms", o.tokens, o.every.Milliseconds())
}

// note records a received seq, with the deliberate fault if there is one.
func (cr *clientRun) note(seq int64) {
	switch {
	case cr.inject == "drop" && seq == 10:
		return // lost
	case cr.inject == "dup" && seq == 10:
		cr.seqs = append(cr.seqs, seq)
	}
	cr.seqs = append(cr.seqs, seq)
}

func (cr *clientRun) last() int64 {
	if len(cr.seqs) == 0 {
		return 0
	}
	return cr.seqs[len(cr.seqs)-1]
}

// cutAfter is how many events a connection reads before the client cuts
// it: three connections in ten are cut after 5 to 150 events.
func cutAfter(rng *rand.Rand) int {
	if rng.IntN(10) < 3 {
		return 5 + rng.IntN(146)
	}
	return -1
}

// driveREST submits the run (resending the message until a replica
// answers), resends it once more mid-run to check idempotency, and follows
// its SSE stream across cuts and replicas until run.end.
func (e *env) driveREST(ctx context.Context, rng *rand.Rand, cr *clientRun) {
	body, _ := json.Marshal(map[string]any{
		"context_id": cr.contextID,
		"message":    map[string]any{"id": cr.key, "role": "user", "parts": []any{map[string]any{"type": "text", "text": cr.text(e.o)}}},
	})
	for cr.id == "" && ctx.Err() == nil {
		if id, err := e.post(ctx, e.pick(rng), cr.agent(), body); err == nil {
			cr.id = id
		} else {
			time.Sleep(200 * time.Millisecond)
		}
	}
	resendAt := 50 + rng.IntN(200)
	for !cr.ended && ctx.Err() == nil {
		base := e.pick(rng)
		if base == "" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		cut := cutAfter(rng)
		n, err := e.follow(ctx, base, cr, cut)
		if len(cr.seqs) >= resendAt && len(cr.retryIDs) == 0 {
			if id, err := e.post(ctx, e.pick(rng), cr.agent(), body); err == nil {
				cr.retryIDs = append(cr.retryIDs, id)
			}
		}
		if !cr.ended {
			cr.disconnects++
			if err != nil || n == 0 {
				time.Sleep(100 * time.Millisecond)
			}
		}
	}
}

// agent is the agent cr's messages go to.
func (cr *clientRun) agent() string {
	if cr.tool {
		return toolAgent
	}
	return "echo"
}

// post sends the message and returns the run that answers it.
func (e *env) post(ctx context.Context, base, agent string, body []byte) (string, error) {
	if base == "" {
		return "", fmt.Errorf("no replica up")
	}
	rctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(rctx, http.MethodPost, base+"/v1/agents/"+agent+"/messages?wait=false", strings.NewReader(string(body)))
	req.Header.Set("Content-Type", "application/json")
	res, err := e.client.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	var v struct {
		ID string `json:"id"`
	}
	if res.StatusCode/100 != 2 || json.NewDecoder(res.Body).Decode(&v) != nil || v.ID == "" {
		return "", fmt.Errorf("POST: %s", res.Status)
	}
	return v.ID, nil
}

// follow reads the run's events after the last one received, until
// run.end, a break, or cut events (cut < 0: no cut). It returns how many
// events it read.
func (e *env) follow(ctx context.Context, base string, cr *clientRun, cut int) (int, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+cr.id+"/events", nil)
	if last := cr.last(); last > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(last, 10))
	}
	res, err := e.client.Do(req)
	if err != nil {
		return 0, err
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, res.Body)
		return 0, fmt.Errorf("GET events: %s", res.Status)
	}
	br := bufio.NewReader(res.Body)
	n := 0
	var seq int64
	var typ, data string
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			return n, err
		}
		line = strings.TrimRight(line, "\r\n")
		switch {
		case strings.HasPrefix(line, "id: "):
			seq, _ = strconv.ParseInt(line[4:], 10, 64)
		case strings.HasPrefix(line, "event: "):
			typ = line[7:]
		case strings.HasPrefix(line, "data: "):
			data = line[6:]
		case line == "" && seq > 0:
			cr.note(seq)
			n++
			if typ == "run.end" && terminalData(data) {
				cr.ended = true
				return n, nil
			}
			seq, typ, data = 0, "", ""
			if n == cut {
				return n, nil
			}
		}
	}
}

func terminalData(data string) bool {
	var d struct {
		State string `json:"state"`
	}
	_ = json.Unmarshal([]byte(data), &d)
	switch d.State {
	case "completed", "failed", "canceled", "rejected":
		return true
	}
	return false
}

// driveA2A sends the message over A2A JSON-RPC as a stream, and follows
// the task across cuts and replicas with SubscribeToTask and the resume
// extension's cursor (Last-Event-ID), applying artifact updates as the
// spec says.
func (e *env) driveA2A(ctx context.Context, rng *rand.Rand, cr *clientRun) {
	cr.held = map[a2a.ArtifactID]*a2a.Artifact{}
	msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.NewTextPart(cr.text(e.o)))
	msg.ID, msg.ContextID = cr.key, cr.contextID
	for !cr.ended && ctx.Err() == nil {
		base := e.pick(rng)
		if base == "" {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		c, err := a2aclient.NewFromEndpoints(ctx, []*a2a.AgentInterface{{URL: base + "/agents/echo/jsonrpc", ProtocolBinding: a2a.TransportProtocolJSONRPC, ProtocolVersion: a2a.Version}})
		if err != nil {
			time.Sleep(100 * time.Millisecond)
			continue
		}
		cut, n := cutAfter(rng), 0
		var stream func(yield func(a2a.Event, error) bool)
		if cr.id == "" {
			stream = c.SendStreamingMessage(ctx, &a2a.SendMessageRequest{Message: msg})
		} else {
			rctx := a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {strconv.FormatInt(cr.last(), 10)}})
			stream = c.SubscribeToTask(rctx, &a2a.SubscribeToTaskRequest{ID: a2a.TaskID(cr.id)})
		}
		for ev, err := range stream {
			if err != nil {
				break
			}
			cr.apply(ev)
			if n++; n == cut || cr.ended {
				break
			}
		}
		_ = c.Destroy()
		if !cr.ended {
			cr.disconnects++
			time.Sleep(50 * time.Millisecond)
		}
	}
}

// apply notes one A2A stream event.
func (cr *clientRun) apply(ev a2a.Event) {
	var meta map[string]any
	switch v := ev.(type) {
	case *a2a.Task:
		// A resumed stream of a finished task still sends the updates
		// after the cursor: the run has ended for this client only at
		// the terminal status update.
		cr.id = string(v.ID)
		return
	case *a2a.TaskStatusUpdateEvent:
		meta = v.Metadata
		if v.Status.State.Terminal() {
			cr.ended = true
		}
	case *a2a.TaskArtifactUpdateEvent:
		meta = v.Metadata
		cur := cr.held[v.Artifact.ID]
		if cur == nil || !v.Append {
			cp := *v.Artifact
			cp.Parts = nil
			cur = &cp
		}
		cur.Parts = append(cur.Parts, v.Artifact.Parts...)
		cr.held[v.Artifact.ID] = cur
	}
	if s, ok := meta[agenta2a.MetaSeq].(float64); ok {
		cr.note(int64(s))
	}
}
