package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"testing"

	"agentd/internal/agent"
	"agentd/internal/engine"
	"agentd/internal/model"
)

func TestResultMessagesAreThisTurnsOutput(t *testing.T) {
	history := agent.BoardSeederFunc(func(_ context.Context, _ agent.RunInfo, req *agent.Request) (*engine.Board, error) {
		b := engine.NewBoard()
		b.SetChannel(engine.MainChannel, []model.Message{
			model.NewText(model.RoleUser, "old question"), model.NewText(model.RoleAssistant, "old answer"),
		})
		return b, agent.SeedRequest(b, req)
	})
	appendTwo := func(ret func(b *engine.Board) *engine.Board, err error) engine.Engine {
		return engine.EngineFunc(func(_ context.Context, run engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
			if run.ResumeFrom != nil {
				b = engine.RestoreBoard(run.ResumeFrom.Board)
			}
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "one"))
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "two"))
			return ret(b), err
		})
	}
	same := func(b *engine.Board) *engine.Board { return b }
	cases := []struct {
		name string
		eng  engine.Engine
		opts []agent.RunOption
		want []string
	}{
		{"default seeder", appendTwo(same, nil), nil, []string{"one", "two"}},
		{"history is not output", appendTwo(same, nil), []agent.RunOption{agent.WithBoardSeed(history)}, []string{"one", "two"}},
		{"partial output of a failed run", appendTwo(same, errors.New("boom")), nil, []string{"one", "two"}},
		{"nil board returned: the seeded board was mutated in place",
			appendTwo(func(*engine.Board) *engine.Board { return nil }, errors.New("boom")), nil, []string{"one", "two"}},
		{"engine returns a new board", appendTwo(func(b *engine.Board) *engine.Board {
			out := engine.RestoreBoard(b.Snapshot())
			out.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleAssistant, "three"))
			return out
		}, nil), nil, []string{"one", "two", "three"}},
		{"resume counts from the checkpoint board", appendTwo(same, nil), []agent.RunOption{agent.WithResumeFrom(&engine.Checkpoint{
			ExecID: "run-1", Board: &engine.BoardSnapshot{Channels: map[string][]model.Message{engine.MainChannel: {
				model.NewText(model.RoleUser, "q"), model.NewText(model.RoleAssistant, "asked"), model.NewText(model.RoleUser, "reply"),
			}}},
		})}, []string{"one", "two"}},
		{"shrunk main channel yields nothing", engine.EngineFunc(func(_ context.Context, _ engine.Run, _ engine.Host, b *engine.Board) (*engine.Board, error) {
			b.SetChannel(engine.MainChannel, nil)
			return b, nil
		}), []agent.RunOption{agent.WithBoardSeed(history)}, []string{}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, err := agent.Run(context.Background(), supportAgent(), tc.eng, userRequest("new question"), tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			if got := texts(res.Messages); !slices.Equal(got, tc.want) {
				t.Errorf("Messages = %q, want %q", got, tc.want)
			}
			if res.LastBoard == nil {
				t.Error("LastBoard is nil")
			}
		})
	}
}

func TestDefaultSeeder(t *testing.T) {
	req := agent.Request{
		Message: model.Message{Parts: []model.Part{model.TextPart("hi")}},
		Inputs:  map[string]any{"tier": "gold"},
	}
	b, err := agent.DefaultSeeder{}.SeedBoard(context.Background(), agent.RunInfo{}, &req)
	if err != nil {
		t.Fatal(err)
	}
	main := b.Channel(engine.MainChannel)
	if len(main) != 1 || main[0].Role != model.RoleUser || main[0].Text() != "hi" {
		t.Errorf("main channel = %+v, want the message with role user", main)
	}
	if req.Message.Role != "" {
		t.Error("seeding changed the caller's request")
	}
	if b.GetVarString("tier") != "gold" {
		t.Errorf("var tier = %q", b.GetVarString("tier"))
	}
	empty, err := agent.DefaultSeeder{}.SeedBoard(context.Background(), agent.RunInfo{}, &agent.Request{})
	if err != nil || len(empty.Channel(engine.MainChannel)) != 0 {
		t.Errorf("a request without parts seeded %v, %v; want an empty board", empty.Channel(engine.MainChannel), err)
	}
}

func TestJSONKeys(t *testing.T) {
	card := agent.AgentCard{
		Name: "Support", Description: "d", Version: "1.0.0",
		Skills: []agent.Skill{{ID: "refund", Name: "Refunds", Tags: []string{"billing"}, Examples: []string{"e"},
			InputModes: []string{"text/plain"}, OutputModes: []string{"text/plain"}}},
		DefaultInputModes: []string{"text/plain"}, DefaultOutputModes: []string{"text/plain"},
		Capabilities: agent.AgentCapabilities{Streaming: true, PushNotifications: true, StateTransitionHistory: true},
	}
	got, err := json.Marshal(card)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"name":"Support","description":"d","version":"1.0.0","skills":[{"id":"refund","name":"Refunds",` +
		`"tags":["billing"],"examples":["e"],"inputModes":["text/plain"],"outputModes":["text/plain"]}],` +
		`"defaultInputModes":["text/plain"],"defaultOutputModes":["text/plain"],` +
		`"capabilities":{"streaming":true,"pushNotifications":true,"stateTransitionHistory":true}}`
	if string(got) != want {
		t.Errorf("AgentCard JSON:\n got %s\nwant %s", got, want)
	}
	req, err := json.Marshal(agent.Request{TaskID: "t", ContextID: "c", RunID: "r",
		Config: &agent.RequestConfig{AcceptedOutputModes: []string{"text/plain"}}})
	if err != nil {
		t.Fatal(err)
	}
	wantReq := `{"taskId":"t","contextId":"c","runId":"r","message":{"role":"","parts":null},` +
		`"configuration":{"acceptedOutputModes":["text/plain"]}}`
	if string(req) != wantReq {
		t.Errorf("Request JSON:\n got %s\nwant %s", req, wantReq)
	}
	res, err := json.Marshal(agent.Result{Status: agent.StatusCompleted, Err: errors.New("x"), LastBoard: engine.NewBoard()})
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"status":"completed","committed":false}`; string(res) != want {
		t.Errorf("Result JSON = %s, want %s", res, want)
	}
}
