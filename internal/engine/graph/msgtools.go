package graph

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// The messaging tools (mailbox.go): steps send with SendMessageTool; the
// coordinator messages steps with MessageStepTool, reads the messages
// that reach it during a turn with ReadInboxTool, tells the user what
// happens with NarrateTool and ends with FinalizeTool.
const (
	SendMessageTool = "send_message"
	MessageStepTool = "message_step"
	ReadInboxTool   = "read_inbox"
	NarrateTool     = "narrate"
	FinalizeTool    = "finalize"
)

type sendArgs struct {
	To      string `json:"to"`
	Step    string `json:"step"`
	Text    string `json:"text"`
	Summary string `json:"summary"`
}

var sendMessageTool = tool.Typed(tool.Spec{
	Name: SendMessageTool,
	Description: "Send a message to the workflow's coordinator (the default) or to another step, by its id. " +
		"A step that has finished is resumed to answer, and its answer is this call's result.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"},"to":{"type":"string","description":"a step id, or coordinator (the default)"}},"required":["text"]}`),
	Flags:      tool.Flags{Idempotent: true},
}, func(ctx context.Context, a sendArgs) (tool.Result, error) {
	s, err := stepFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	if s.id == Coordinator {
		return tool.Result{}, errdefs.Validationf("the coordinator messages steps with %s", MessageStepTool)
	}
	return s.x.sendFromTool(ctx, s.id, nonEmptyOr(strings.TrimSpace(a.To), Coordinator), a.Text)
})

var messageStepTool = tool.Typed(tool.Spec{
	Name: MessageStepTool,
	Description: "Send a message to a step of the workflow, by its id. A running step reads it before its next model turn; " +
		"one that has not started reads it when it starts; one that has finished is resumed to answer, and its answer is this call's result.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"step":{"type":"string"},"text":{"type":"string"}},"required":["step","text"]}`),
	Flags:      tool.Flags{Idempotent: true},
}, func(ctx context.Context, a sendArgs) (tool.Result, error) {
	s, err := coordinatorFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	return s.x.sendFromTool(ctx, Coordinator, strings.TrimSpace(a.Step), a.Text)
})

var readInboxTool = tool.New(tool.Spec{
	Name:        ReadInboxTool,
	Description: "Read the messages that reached you since your turn began.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{}}`),
}, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
	s, err := coordinatorFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	text, err := s.x.readInbox(callKey(ctx))
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Text(text), nil
})

// readInbox takes the coordinator's waiting messages, as text. What a
// call read is recorded under its idempotency key, with the messages'
// delivery, in one checkpoint: the call replayed after a crash reads the
// same messages again, and no later call reads them twice.
func (x *execution) readInbox(key string) (string, error) {
	recorded := "inbox:" + key
	x.mu.Lock()
	if text, ok := x.st.Mail.Replies[recorded]; ok && key != "" {
		x.mu.Unlock()
		return text, nil
	}
	msgs := slices.Clone(x.st.Mail.Boxes[Coordinator])
	x.mu.Unlock()
	if len(msgs) == 0 {
		return "no new messages", nil
	}
	var b strings.Builder
	ids := make([]string, len(msgs))
	for i, m := range msgs {
		fmt.Fprintf(&b, "- from %s: %s\n", m.From, m.Content)
		ids[i] = m.ID
	}
	x.delivered(Coordinator, ids)
	if key != "" {
		x.mu.Lock()
		if x.st.Mail.Replies == nil {
			x.st.Mail.Replies = map[string]string{}
		}
		x.st.Mail.Replies[recorded] = b.String()
		x.mu.Unlock()
	}
	return b.String(), x.checkpoint(checkpointMailPrefix + Coordinator)
}

// callKey is the idempotency key of the tool call ctx carries, "" for none.
func callKey(ctx context.Context) string {
	if c, ok := tool.CallFromContext(ctx); ok {
		return c.IdempotencyKey
	}
	return ""
}

var narrateTool = tool.Typed(tool.Spec{
	Name:        NarrateTool,
	Description: "Tell the user what is happening in the workflow.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
	Flags:       tool.Flags{Idempotent: true},
}, func(ctx context.Context, a sendArgs) (tool.Result, error) {
	s, err := coordinatorFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	s.x.note("", "coordinator_narration", map[string]any{"text": a.Text})
	return tool.Text("narrated"), nil
})

var finalizeTool = tool.Typed(tool.Spec{
	Name:        FinalizeTool,
	Description: "End your coordination with a summary of the workflow's results for the user: it becomes the workflow's answer.",
	Parameters:  json.RawMessage(`{"type":"object","properties":{"summary":{"type":"string"}},"required":["summary"]}`),
	Flags:       tool.Flags{Idempotent: true},
}, func(ctx context.Context, a sendArgs) (tool.Result, error) {
	s, err := coordinatorFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	if err := s.x.finalize(a.Summary); err != nil {
		return tool.Result{}, err
	}
	return tool.Text("finalized"), nil
})

func coordinatorFrom(ctx context.Context) (stepRef, error) {
	s, err := stepFrom(ctx)
	if err == nil && s.id != Coordinator {
		err = errdefs.Validationf("only the workflow's coordinator has this tool")
	}
	return s, err
}

// sendFromTool sends a tool call's message; a message to a step that
// completed waits for the step's answer. A drop is the call's error
// result, with its reason, for the agent to act on.
func (x *execution) sendFromTool(ctx context.Context, from, to, text string) (tool.Result, error) {
	if strings.TrimSpace(text) == "" {
		return tool.Result{}, errdefs.Validationf("text: required")
	}
	m, _, err := x.send(ctx, messageID(callKey(ctx)), from, to, text)
	var drop *dropError
	if errors.As(err, &drop) {
		return tool.Result{Content: drop.Error(), IsError: true}, nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	x.mu.Lock()
	resume := to != Coordinator && x.resumable(to)
	x.mu.Unlock()
	if !resume {
		return tool.Text("sent to " + to), nil
	}
	reply, err := x.replyTo(ctx, to, m)
	if errors.Is(err, errResuming) {
		return tool.Text("sent to " + to + "; " + err.Error()), nil
	}
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Text("reply from " + to + ":\n" + reply), nil
}
