package llm

import "agentd/internal/model"

// Token estimates, for when a provider has not (yet) reported usage: the
// loop engine sizes its requests against the model's context window with
// them (engine/loop, context.go).
//
// The estimate is deliberately simple and model-agnostic: one token per
// BytesPerToken bytes of every text, tool-call name and arguments,
// tool-result content and data part (rounded up), plus MessageOverhead
// tokens per message for the role and framing. English text under the
// common BPE vocabularies averages about four bytes a token; code, JSON
// and non-Latin scripts run denser, which is why the loop calibrates the
// estimate against the usage the provider reports once a turn has been
// answered.
const (
	BytesPerToken   = 4
	MessageOverhead = 4
	// ToolOverhead is the framing of one tool offered to the model.
	ToolOverhead = 8
	// fileTokens stands for a file part (an image or a document):
	// providers bill those by their own rules, unknown here.
	fileTokens = 256
)

// Request metadata that providers may act on: MetadataPurpose says why the
// engine makes a call. A summarisation of old conversation for context
// compaction carries PurposeCompaction, so that a scripted provider can
// answer it deterministically (internal/llm/scripted).
const (
	MetadataPurpose   = "purpose"
	PurposeCompaction = "compaction"
)

// MetadataSummarisedTurns is the message metadata key of a compaction
// summary in a request: how many assistant messages the summary stands
// for, so that a provider numbering turns (the scripted provider's call
// ids) counts them as if they were still there.
const MetadataSummarisedTurns = "summarised_assistant_turns"

// EstimateBytes is the estimate for n bytes of text.
func EstimateBytes(n int) int { return (n + BytesPerToken - 1) / BytesPerToken }

// EstimateMessage estimates the tokens of one message of a request.
func EstimateMessage(m model.Message) int {
	n := 0
	for i := range m.Parts {
		p := &m.Parts[i]
		n += len(p.Text) + len(p.Data)
		if p.ToolCall != nil {
			n += len(p.ToolCall.ID) + len(p.ToolCall.Name) + len(p.ToolCall.Arguments)
		}
		if p.ToolResult != nil {
			n += len(p.ToolResult.ToolCallID) + len(p.ToolResult.Content)
		}
	}
	t := MessageOverhead + EstimateBytes(n)
	for i := range m.Parts {
		if m.Parts[i].File != nil {
			t += fileTokens
		}
	}
	return t
}

// EstimateMessages estimates the tokens of msgs.
func EstimateMessages(msgs []model.Message) int {
	n := 0
	for i := range msgs {
		n += EstimateMessage(msgs[i])
	}
	return n
}

// EstimateTools estimates the tokens the tool declarations add to every
// request.
func EstimateTools(specs []ToolSpec) int {
	n := 0
	for _, s := range specs {
		n += ToolOverhead + EstimateBytes(len(s.Name)+len(s.Description)+len(s.Parameters))
	}
	return n
}
