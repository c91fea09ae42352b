package graph

import (
	"fmt"
	"strings"
)

// The prompt caps of zenflow's executor (docs: concepts/dag-scheduling,
// "Data Passing"): each dependency's content, and its result, are cut to
// MaxDependencyBytes before they are injected into a dependent step's
// prompt, and the whole prompt to MaxPromptBytes. A step whose content
// was aggregated on purpose (a loop with outputMode: cumulative,
// StepResult.PreserveContent) escapes the per-dependency cap, and a
// prompt that injects one escapes the overall cap too: cutting it from
// the end would drop the latest iterations, which are what it is for.
const (
	MaxDependencyBytes = 16 * 1024
	MaxPromptBytes     = 120 * 1024
)

// truncationMarker ends a cut section, so that the model knows the text
// was elided on purpose.
const truncationMarker = "\n...[truncated for context limit]\n"

// truncate cuts s to at most limit bytes, the marker included, on a rune
// boundary.
func truncate(s string, limit int) string {
	if limit <= 0 || len(s) <= limit {
		return s
	}
	keep := max(0, limit-len(truncationMarker))
	for keep > 0 && s[keep]&0xC0 == 0x80 {
		keep--
	}
	return s[:keep] + truncationMarker
}

// capPrompt applies MaxPromptBytes to an assembled prompt unless a
// dependency's content is preserved.
func capPrompt(prompt string, preserved bool) string {
	if preserved {
		return prompt
	}
	return truncate(prompt, MaxPromptBytes)
}

// Supported rejects what a document may say but agentd cannot honour:
// an options.isolation other than "none".
// The spec leaves the value to the consumer ("none", "worktree-per-step"
// …); agentd's steps run as agent runs that share no working directory
// a strategy could partition, so only "none" means what it says.
// Accepting another value and running unisolated would be a silent lie.
func Supported(w *Workflow) error {
	switch strings.TrimSpace(w.Options.Isolation) {
	case "", IsolationNone:
		return nil
	}
	return fmt.Errorf(`options.isolation: %q is not supported: this server runs steps as agent runs with no per-step working directory to isolate; use "none" or leave it out`, w.Options.Isolation)
}

// IsolationNone is the one options.isolation value agentd honours.
const IsolationNone = "none"
