package agent_test

import (
	"context"
	"fmt"
	"sync"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

// transcripts is the smallest conversation store: what a real host keeps
// in its database.
type transcripts struct {
	mu   sync.Mutex
	msgs map[string][]model.Message
}

func (s *transcripts) load(contextID string) []model.Message {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]model.Message(nil), s.msgs[contextID]...)
}

func (s *transcripts) append(contextID string, msgs ...model.Message) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.msgs[contextID] = append(s.msgs[contextID], msgs...)
}

// transcriptAppender persists committed turns: the request, then what the
// turn produced.
type transcriptAppender struct {
	agent.BaseObserver
	store *transcripts
	req   model.Message
}

func (a *transcriptAppender) OnRunEnd(_ context.Context, info agent.RunInfo, res *agent.Result) {
	if res == nil || !res.Committed {
		return
	}
	a.store.append(info.ContextID, append([]model.Message{a.req}, res.Messages...)...)
}

// The canonical multi-turn wiring: a seeder loads the transcript, an
// observer appends committed turns, and the engine only ever sees a board.
func Example_multiTurn() {
	store := &transcripts{msgs: map[string][]model.Message{}}
	echo := engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
		main := b.Channel(engine.MainChannel)
		reply := fmt.Sprintf("turn with %d prior messages: %s", len(main)-1, main[len(main)-1].Text())
		b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, reply))
		return b, nil
	})
	seed := agent.BoardSeederFunc(func(_ context.Context, info agent.RunInfo, req *agent.Request) (*engine.Board, error) {
		b := engine.NewBoard()
		b.SetChannel(engine.MainChannel, store.load(info.ContextID))
		return b, agent.SeedRequest(b, req)
	})
	for _, text := range []string{"hello", "again"} {
		req := agent.Request{ContextID: "ctx-1", Message: model.NewText(model.RoleUser, text)}
		ag := agent.Agent{ID: "echo", Card: agent.AgentCard{Name: "Echo"},
			Observers: []agent.Observer{&transcriptAppender{store: store, req: req.Message}}}
		res, err := agent.Run(context.Background(), ag, echo, req, agent.WithBoardSeed(seed))
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(res.Status, res.Messages[0].Text())
	}
	fmt.Println(len(store.load("ctx-1")), "messages in the transcript")
	// Output:
	// completed turn with 0 prior messages: hello
	// completed turn with 2 prior messages: again
	// 4 messages in the transcript
}
