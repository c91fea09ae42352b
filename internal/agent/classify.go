package agent

import (
	"context"
	"errors"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// classify maps a non-nil engine error to a Status. Order matters: an
// interrupt the engine honoured wins over a cancel racing it, and a cancel
// is checked before Aborted because errdefs classifies context.Canceled
// as Aborted.
func classify(ctx context.Context, err error) Status {
	switch {
	case errdefs.IsInterrupted(err):
		return StatusInterrupted
	case errors.Is(err, context.Canceled) || errors.Is(ctx.Err(), context.Canceled):
		return StatusCanceled
	case errdefs.IsAborted(err):
		return StatusAborted
	default:
		return StatusFailed
	}
}

// asInterrupt finds the engine.InterruptedError in err's chain, by value
// or by pointer, since hosts may construct either.
func asInterrupt(err error) (engine.Interrupt, bool) {
	var v engine.InterruptedError
	if errors.As(err, &v) {
		return v.Interrupt, true
	}
	var p *engine.InterruptedError
	if errors.As(err, &p) && p != nil {
		return p.Interrupt, true
	}
	return engine.Interrupt{}, false
}

// producedMessages returns the main channel of b beyond its first start
// messages — what the turn appended (see Result.Messages) — without
// copying them: the engine is done with the board.
func producedMessages(b *engine.Board, start int) []model.Message {
	msgs := b.ChannelView(engine.MainChannel)
	if len(msgs) <= start {
		return nil
	}
	return msgs[start:]
}
