package agentproto

import (
	"context"
	"encoding/json"
	"strings"
	"time"

	"agentd/internal/errdefs"
	runv "agentd/internal/run"
	"agentd/internal/runtime"
)

// A copied thread (threads.copy) has the source's history: the runtime
// copies the transcript into a new thread; the face records on the copy's
// thread record where it came from and when (metaCopiedFrom), and the
// copy's history begins with the source's checkpoints written before the
// copy, re-rooted on the copy — the same checkpoint ids, the copy's
// thread_id — so that its first run descends from the source's newest
// checkpoint and a run on the copy may fork from any of them. Nothing is
// duplicated: the checkpoints stay the source runs' (until retention
// prunes those runs).

// metaCopiedFrom is the thread record metadata key of a copy:
// {"thread": the source's id, "at": the time of the copy}. Thread views
// leave it out (publicMetadata).
const metaCopiedFrom = "agentd.copied_from"

// maxLineage bounds how many copies deep a history is followed.
const maxLineage = 16

type lineage struct {
	Thread string    `json:"thread"`
	At     time.Time `json:"at"`
}

// copiedFrom reads th's lineage; ok is false for a thread that is no copy.
func copiedFrom(th runv.Thread) (lineage, bool) {
	v, ok := th.Metadata[metaCopiedFrom]
	if !ok {
		return lineage{}, false
	}
	b, err := json.Marshal(v)
	if err != nil {
		return lineage{}, false
	}
	var l lineage
	if json.Unmarshal(b, &l) != nil || l.Thread == "" {
		return lineage{}, false
	}
	return l, true
}

// copyWithHistory copies the thread and records the copy's lineage; a copy
// whose lineage cannot be recorded is deleted again, so that no copy
// without its history is left.
func (s *Server) copyWithHistory(ctx context.Context, from string) (runv.Thread, error) {
	at := time.Now().UTC()
	th, err := s.rt.CopyThread(ctx, from)
	if err != nil {
		return th, err
	}
	md := map[string]any{metaCopiedFrom: lineage{Thread: from, At: at}}
	for k := range th.Metadata {
		if strings.HasPrefix(k, "agentd.") && k != metaCopiedFrom {
			md[k] = nil // the source's own facts (an AG-UI resume's runId) are not the copy's
		}
	}
	th, err = s.rt.UpdateThreadMetadata(ctx, th.ID, md)
	if err != nil {
		_ = s.rt.DeleteThread(context.WithoutCancel(ctx), th.ID)
	}
	return th, err
}

// inheritedNodes are the checkpoints a copied thread starts with: its
// source's, written before the copy (nil for a thread that is no copy).
func (s *Server) inheritedNodes(ctx context.Context, threadID string, depth int) ([]node, error) {
	th, err := s.rt.GetThread(ctx, threadID)
	if errdefs.IsNotFound(err) {
		return nil, nil // a context with no thread record: a REST or A2A conversation
	}
	if err != nil {
		return nil, err
	}
	l, ok := copiedFrom(th)
	if !ok || depth >= maxLineage {
		return nil, nil
	}
	src, err := s.nodesOf(ctx, l.Thread, depth+1)
	if err != nil {
		return nil, err
	}
	out := src[:0]
	for _, n := range src {
		if !n.cp.Timestamp.After(l.At) {
			out = append(out, n)
		}
	}
	return out, nil
}

// checkpointThread is the thread whose run wrote checkpoint id, among the
// threads threadID's history comes from: threadID itself, or the source
// of a copy, whose checkpoints a run on the copy may fork from.
func (s *Server) checkpointThread(ctx context.Context, threadID, id string) (string, error) {
	ref, err := runtime.ParseCheckpointRef(id)
	if err != nil {
		return threadID, nil // CheckFork names the bad id
	}
	if t, err := s.rt.GetTask(ctx, ref.RunID); err != nil || t.ContextID == threadID {
		return threadID, nil // the thread's own, or none: CheckFork tells
	}
	nodes, err := s.threadNodes(ctx, threadID)
	if err != nil {
		return "", err
	}
	for _, n := range nodes {
		if n.id == id && n.run.ID == ref.RunID {
			return n.run.ContextID, nil
		}
	}
	return threadID, nil
}

// checkMetadata refuses a client's thread metadata that sets one of the
// server's own keys ("agentd.…").
func checkMetadata(md map[string]any) error {
	for k := range md {
		if strings.HasPrefix(k, "agentd.") {
			return badInput("metadata", "key %q is reserved: agentd.* keys are the server's", k)
		}
	}
	return nil
}

// publicMetadata is a thread record's metadata as clients read it: the
// server's own keys left out.
func publicMetadata(md map[string]any) map[string]any {
	out := make(map[string]any, len(md))
	for k, v := range md {
		if !strings.HasPrefix(k, "agentd.") {
			out[k] = v
		}
	}
	return out
}
