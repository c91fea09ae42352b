package engine

import (
	"context"
	"encoding/json"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/event"
	"agentd/internal/model"
)

// ArtifactPayload is the payload of a SubjectRunArtifact envelope: an
// artifact, or a chunk of one. The first chunk of an artifact has Append
// false; later chunks with Append true extend its parts; LastChunk marks the
// final chunk.
type ArtifactPayload struct {
	Artifact  model.Artifact `json:"artifact"`
	Append    bool           `json:"append,omitempty"`
	LastChunk bool           `json:"last_chunk,omitempty"`
}

// EmitArtifact publishes an artifact (chunk) of run runID. The artifact
// needs an ID and at least one valid part.
func EmitArtifact(ctx context.Context, pub Publisher, runID string, p ArtifactPayload) error {
	if p.Artifact.ID == "" {
		return errdefs.Validationf("emit artifact of run %s: artifact has no id", runID)
	}
	if len(p.Artifact.Parts) == 0 {
		return errdefs.Validationf("emit artifact %s of run %s: no parts", p.Artifact.ID, runID)
	}
	for i, part := range p.Artifact.Parts {
		if err := part.Validate(); err != nil {
			return errdefs.Validationf("emit artifact %s of run %s: parts[%d]: %v", p.Artifact.ID, runID, i, err)
		}
	}
	b, err := json.Marshal(p)
	if err != nil {
		return errdefs.Internalf("emit artifact %s of run %s: %w", p.Artifact.ID, runID, err)
	}
	env := event.Envelope{Subject: SubjectRunArtifact(runID), Time: time.Now().UTC(), RunID: runID, Payload: b}
	return pub.Publish(ctx, env)
}
