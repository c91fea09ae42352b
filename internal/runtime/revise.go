package runtime

import (
	"context"
	"maps"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// MetadataRevision marks what a revise attempt's board holds besides the
// run's history: the answer being revised and the message telling the
// model what to change. They are on the board for the model, never in the
// transcript (newMessages leaves them out), whose record of the run is its
// final answer; the drafts stay in the run's events and trajectory.
const MetadataRevision = "agentd.revision"

// isRevision reports whether m is a revise attempt's draft or feedback.
func isRevision(m model.Message) bool { return m.Metadata[MetadataRevision] == true }

// revisionSeeder seeds the attempts of an agent with a revise loop: the
// first like any run, a revise attempt with the answer being revised and
// a user message carrying the deciders' feedback after it, so that the
// model revises its answer instead of writing the same one again.
type revisionSeeder struct {
	agent.BoardSeederFunc
}

// SeedRevision implements agent.RevisionSeeder.
func (s revisionSeeder) SeedRevision(ctx context.Context, info agent.RunInfo, req *agent.Request, prev *agent.Result) (*engine.Board, error) {
	b, err := s.SeedBoard(ctx, info, req)
	if err != nil {
		return nil, err
	}
	for _, m := range prev.Messages {
		m.Metadata = maps.Clone(m.Metadata)
		if m.Metadata == nil {
			m.Metadata = map[string]any{}
		}
		m.Metadata[MetadataRevision] = true
		b.AppendChannelMessage(engine.MainChannel, m)
	}
	feedback, _ := prev.State[agent.ReviseFeedbackStateKey].(string)
	if feedback == "" {
		feedback, _ = prev.State[agent.FinalizeReasonStateKey].(string)
	}
	msg := model.NewText(model.RoleUser, "A reviewer asked you to revise your answer: "+feedback+"\nAnswer again, with the whole revised answer.")
	msg.ID = model.NewID()
	msg.Metadata = map[string]any{MetadataRevision: true}
	b.AppendChannelMessage(engine.MainChannel, msg)
	return b, nil
}
