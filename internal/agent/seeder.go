package agent

import (
	"context"
	"strings"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// BoardSeeder builds the board an attempt starts from: conversation
// history, retrieved memory, system prompts, request vars — whatever the
// engine expects to find. Run calls it once per fresh attempt (the first,
// and each revise), before OnRunStart; an attempt resumed from a
// checkpoint starts from the checkpoint's board instead and is not seeded.
//
// It must return a new board on every call (the engine mutates it) and
// never nil; an error or a nil board is an infrastructure failure of Run.
// Keep it quick: slow I/O belongs before Run.
type BoardSeeder interface {
	SeedBoard(ctx context.Context, info RunInfo, req *Request) (*engine.Board, error)
}

// RevisionSeeder is a BoardSeeder that seeds revise attempts itself: it
// sees the completed attempt being revised, whose State holds the merged
// decision's Reason (FinalizeReasonStateKey) and the deciders' entries —
// a judge's feedback (ReviseFeedbackStateKey) — so that the next attempt
// can be told what to change. Without it a revise attempt is seeded like
// the first, from the original Request alone.
type RevisionSeeder interface {
	BoardSeeder
	SeedRevision(ctx context.Context, info RunInfo, req *Request, prev *Result) (*engine.Board, error)
}

// ReviseFeedbackStateKey is the Result.State key under which a Decider
// that asks to Revise leaves what the next attempt should change (a
// string), for a RevisionSeeder.
const ReviseFeedbackStateKey = "agentd.revise_feedback"

// BoardSeederFunc adapts a function to BoardSeeder:
//
//	agent.WithBoardSeed(agent.BoardSeederFunc(func(ctx context.Context, info agent.RunInfo, req *agent.Request) (*engine.Board, error) {
//		prior, err := transcripts.Load(ctx, info.ContextID)
//		if err != nil {
//			return nil, err
//		}
//		b := engine.NewBoard()
//		b.SetChannel(engine.MainChannel, prior)
//		return b, agent.SeedRequest(b, req)
//	}))
type BoardSeederFunc func(ctx context.Context, info RunInfo, req *Request) (*engine.Board, error)

// SeedBoard calls f.
func (f BoardSeederFunc) SeedBoard(ctx context.Context, info RunInfo, req *Request) (*engine.Board, error) {
	return f(ctx, info, req)
}

// DefaultSeeder is the seeder Run uses without WithBoardSeed: a new board
// holding the request (see SeedRequest) and nothing else.
type DefaultSeeder struct{}

// SeedBoard implements BoardSeeder.
func (DefaultSeeder) SeedBoard(_ context.Context, _ RunInfo, req *Request) (*engine.Board, error) {
	b := engine.NewBoard()
	if err := SeedRequest(b, req); err != nil {
		return nil, err
	}
	return b, nil
}

// SeedRequest writes req onto b the way DefaultSeeder does, for custom
// seeders that add history first: req.Message is appended to
// engine.MainChannel (with role user when it has none; a message without
// parts is skipped, so a content-less request adds nothing) and each
// req.Inputs entry becomes a board var. An input key starting with "__",
// the prefix the board reserves for engine slots, is a Validation error.
func SeedRequest(b *engine.Board, req *Request) error {
	if req == nil {
		return nil
	}
	for k := range req.Inputs {
		if strings.HasPrefix(k, "__") {
			return errdefs.Validationf("request input %q: keys starting with \"__\" are reserved for the engine", k)
		}
	}
	for k, v := range req.Inputs {
		b.SetVar(k, v)
	}
	if len(req.Message.Parts) > 0 {
		msg := req.Message
		if msg.Role == "" {
			msg.Role = model.RoleUser
		}
		b.AppendChannelMessage(engine.MainChannel, msg)
	}
	return nil
}
