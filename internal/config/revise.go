package config

import (
	"fmt"

	"agentd/internal/agent/judge"
	"agentd/internal/runtime"
)

// Revise is an agent's revise loop: after each answer a judge model
// decides whether it is acceptable, and a rejected answer is revised —
// the agent runs again, seeing its answer and the judge's feedback — up
// to MaxRevisions times; the last answer stands.
type Revise struct {
	// Judge names the provider of the judge model (a key of providers);
	// Model its model (empty: the provider's default).
	Judge string `json:"judge"`
	Model string `json:"model,omitempty"`
	// Instructions replace the judge's default system prompt; the judge
	// must reply ACCEPT or REVISE: <feedback>.
	Instructions string `json:"instructions,omitempty"`
	// MaxRevisions bounds the revisions (1 to 10).
	MaxRevisions int `json:"max_revisions"`
}

// MaxRevisions bounds Revise.MaxRevisions: each is a full run of the agent
// and a judge's turn.
const MaxRevisions = 10

// validate checks the revise loop at path.
func (r *Revise) validate(path string, providers map[string]Provider) error {
	if r.Judge == "" {
		return fmt.Errorf("%s.judge: the judge's provider is required", path)
	}
	if _, ok := providers[r.Judge]; !ok {
		return fmt.Errorf("%s.judge: unknown provider %q (providers: %q)", path, r.Judge, sortedProviderNames(providers))
	}
	if r.MaxRevisions < 1 || r.MaxRevisions > MaxRevisions {
		return fmt.Errorf("%s.max_revisions: want 1 to %d, got %d", path, MaxRevisions, r.MaxRevisions)
	}
	return nil
}

// revise adds agent a's revise loop, if it has one, to ra.
func (b *builder) revise(path string, a Agent, ra *runtime.Agent) error {
	if a.Revise == nil {
		return nil
	}
	p, err := b.provider(a.Revise.Judge)
	if err != nil {
		return fmt.Errorf("%s.revise.judge: %w", path, err)
	}
	ra.Deciders = append(ra.Deciders, &judge.Judge{Provider: p, Model: a.Revise.Model, Instructions: a.Revise.Instructions})
	ra.MaxRevise = 1 + a.Revise.MaxRevisions
	return nil
}
