package loop

import (
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// How a turn ended matters once the model answers without calling tools:
//   - "length": the answer was cut at max_tokens. With OnLength
//     "continue" (the default) the cut answer stays on the board, marked
//     MetadataTruncated, a user message marked MetadataContinuation asks
//     the model to go on, and the next answer is joined to it — up to
//     MaxContinuations times; an answer still cut after that (or at once,
//     with OnLength "fail") fails the run with class model_output.
//     With OnLength "compact" the history is compacted (summarised, as
//     when it outgrows the context window) and the turn asked again, once.
//   - "content_filter": the provider withheld the answer; the run fails
//     with class content_filter (retrying the same way would not help).
// Every model step records its finish reason (the trajectory's
// finish_reason), so a reader sees which turns were cut.

// OnLength values.
const (
	OnLengthContinue = "continue"
	OnLengthCompact  = "compact"
	OnLengthFail     = "fail"
)

// DefaultMaxContinuations is how often a cut answer is continued when
// Config.MaxContinuations is 0.
const DefaultMaxContinuations = 1

// Message metadata keys of a continued answer.
const (
	MetadataTruncated    = "agentd.truncated"
	MetadataContinuation = "agentd.continuation"
)

// continuePrompt asks the model to go on with a cut answer.
const continuePrompt = "Your answer was cut off by the length limit. Continue exactly where it stopped, " +
	"without repeating anything and without any preface."

// checkFinish looks at how the answer msg of turn n ended. cont says msg
// was cut and a continuation turn is on the board; err ends the run.
func (x *execution) checkFinish(n int, msg model.Message) (cont bool, err error) {
	switch x.finish {
	case llm.FinishContentFilter:
		x.appendMessage(markPartial(msg))
		return false, errdefs.ContentFilterf("loop agent %q: model turn %d: the provider withheld the answer (finish_reason content_filter)", x.actor, n)
	case llm.FinishLength:
	default:
		return false, nil
	}
	if x.e.cfg.OnLength == OnLengthCompact && !x.lengthCompacted {
		// The history leaves the answer too little room: summarise it and
		// ask again. The cut answer is dropped; a second cut fails.
		x.lengthCompacted, x.cm.force = true, true
		return true, nil
	}
	done := continuations(x.board.ChannelView(engine.MainChannel))
	if x.e.cfg.OnLength != OnLengthContinue || done >= x.e.cfg.MaxContinuations {
		x.appendMessage(markPartial(msg))
		return false, errdefs.ModelOutputf("loop agent %q: model turn %d: the answer was cut at the length limit (finish_reason length, max_tokens %d) after %d continuations",
			x.actor, n, x.e.cfg.MaxTokens, done)
	}
	msg.Metadata = withKey(msg.Metadata, MetadataTruncated, true)
	x.appendMessage(msg)
	ask := model.NewText(model.RoleUser, continuePrompt)
	ask.Metadata = map[string]any{MetadataContinuation: true}
	x.appendMessage(ask)
	return true, nil
}

// joinContinued makes the whole answer of a continued one: the board's
// trailing cut answers and continuation prompts are replaced by one
// message, their texts joined with msg's. Without continuations msg is
// returned as it is.
func (x *execution) joinContinued(msg model.Message) model.Message {
	msgs := x.board.Channel(engine.MainChannel)
	i := len(msgs)
	for i >= 2 && msgs[i-1].Metadata[MetadataContinuation] == true && msgs[i-2].Metadata[MetadataTruncated] == true {
		i -= 2
	}
	if i == len(msgs) {
		return msg
	}
	var text strings.Builder
	for j := i; j < len(msgs); j += 2 {
		text.WriteString(msgs[j].Text())
	}
	text.WriteString(msg.Text())
	whole := model.NewText(model.RoleAssistant, text.String())
	whole.Metadata = map[string]any{MetadataContinued: len(msgs[i:]) / 2}
	x.board.SetChannel(engine.MainChannel, msgs[:i])
	return whole
}

// MetadataContinued, on a joined answer, counts the continuations it took.
const MetadataContinued = "agentd.continued"

// continuations counts the continuation prompts at the end of msgs.
func continuations(msgs []model.Message) int {
	n := 0
	for i := len(msgs); i >= 2 && msgs[i-1].Metadata[MetadataContinuation] == true; i -= 2 {
		n++
	}
	return n
}

func markPartial(msg model.Message) model.Message {
	msg.Metadata = withKey(msg.Metadata, MetadataPartial, true)
	return msg
}

func withKey(m map[string]any, k string, v any) map[string]any {
	out := make(map[string]any, len(m)+1)
	for key, val := range m {
		out[key] = val
	}
	out[k] = v
	return out
}
