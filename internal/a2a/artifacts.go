package a2a

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
)

// artifacts returns t's artifacts as a client that streamed the run up to
// seq through (math.MaxInt64: all of it) holds them: every artifact update of the log applied in order (appended,
// or replaced where an attempt that resumed a run cut short streams its
// answer again), with the text chunks of a part run together. So a task
// has exactly one answer artifact per assistant answer, whatever happened
// to the attempts that produced it. Artifacts the engine recorded on the
// task whose updates are no longer in the log (pruned) follow as recorded.
func (h *handler) artifacts(ctx context.Context, t run.Task, through int64) ([]*a2a.Artifact, error) {
	x := newTranslator(t)
	var (
		order []a2a.ArtifactID
		byID  = map[a2a.ArtifactID]*a2a.Artifact{}
	)
	for after := int64(0); after < through; {
		// The stored log: what a stream could replay (a terminal state is
		// stored with every event of its run).
		page, err := h.reads().ReadEvents(ctx, t.ID, after, primeWindowMax)
		if err != nil {
			return nil, toA2AError(ctx, err)
		}
		evs := page.Events
		if len(evs) == 0 {
			break
		}
		for _, ev := range evs {
			if ev.Seq > through {
				break
			}
			if !x.touchesArtifacts(ev) {
				continue
			}
			up, ok := x.translate(ev).(*a2a.TaskArtifactUpdateEvent)
			if !ok {
				continue
			}
			a := byID[up.Artifact.ID]
			if a == nil {
				order = append(order, up.Artifact.ID)
			}
			byID[up.Artifact.ID] = applyUpdate(a, up)
		}
		after = evs[len(evs)-1].Seq
	}
	out := make([]*a2a.Artifact, 0, len(order)+len(t.Artifacts))
	for _, id := range order {
		if a := byID[id]; len(a.Parts) > 0 {
			out = append(out, a)
		}
	}
	for _, a := range t.Artifacts {
		if byID[a2a.ArtifactID(a.ID)] == nil {
			out = append(out, toArtifact(a))
		}
	}
	return out, nil
}

// applyUpdate applies an artifact update to what the client holds (nil:
// nothing yet), as the A2A spec defines append: false replaces, true
// appends. Empty text parts (the lastChunk markers) are dropped, and a text
// part that follows a text part is joined to it.
func applyUpdate(held *a2a.Artifact, up *a2a.TaskArtifactUpdateEvent) *a2a.Artifact {
	if held == nil || !up.Append {
		a := *up.Artifact
		a.Parts = nil
		held = &a
	}
	for _, p := range up.Artifact.Parts {
		text, isText := p.Content.(a2a.Text)
		if isText && text == "" {
			continue
		}
		if n := len(held.Parts); isText && n > 0 {
			if prev, ok := held.Parts[n-1].Content.(a2a.Text); ok {
				joined := *held.Parts[n-1]
				joined.Content = prev + text
				held.Parts[n-1] = &joined
				continue
			}
		}
		held.Parts = append(held.Parts, p)
	}
	return held
}
