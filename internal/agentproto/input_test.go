package agentproto

import (
	"encoding/json"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

func TestUserMessage(t *testing.T) {
	cases := []struct {
		name, input, text, field string
	}{
		{"role user", `{"messages":[{"role":"user","content":"hi"}]}`, "hi", ""},
		{"type human, last one", `{"messages":[{"type":"human","content":"a"},{"type":"ai","content":"b"},{"type":"human","content":"c"}]}`, "c", ""},
		{"content blocks", `{"messages":[{"role":"user","content":[{"type":"text","text":"x"},{"type":"image_url"},{"type":"text","text":"y"}]}]}`, "xy", ""},
		{"no human", `{"messages":[{"role":"assistant","content":"a"}]}`, "", "input.messages"},
		{"not a list", `{"messages":"hi"}`, "", "input.messages"},
		{"bad content", `{"messages":[{"role":"user","content":7}]}`, "", "input.messages[0].content"},
		{"missing", ``, "", "input"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := userMessage(json.RawMessage(c.input))
			if c.field != "" {
				if !errdefs.IsValidation(err) || errdefs.FieldOf(err) != c.field {
					t.Fatalf("err %v (field %q), want a validation error of %s", err, errdefs.FieldOf(err), c.field)
				}
				return
			}
			if err != nil || m.Role != model.RoleUser || m.Text() != c.text {
				t.Fatalf("got %+v, %v; want user %q", m, err, c.text)
			}
		})
	}
}

func TestResumeMessage(t *testing.T) {
	prompt, err := model.DataPart(map[string]any{"pending_approvals": []engine.ApprovalRequest{
		{CallID: "c1", Tool: "delete_file", Arguments: json.RawMessage(`{"path":"a"}`)},
		{CallID: "c2", Tool: "delete_file", Arguments: json.RawMessage(`{"path":"b"}`)},
	}})
	if err != nil {
		t.Fatal(err)
	}
	waiting := run.Task{State: run.StateInputRequired, StatusMessage: &model.Message{Role: model.RoleAssistant, Parts: []model.Part{prompt}}}
	cases := []struct {
		name, resume string
		want         []string // decisions per call
		field        string
	}{
		{"accept all", `{"type":"accept"}`, []string{"approve", "approve"}, ""},
		{"one per call", `[{"type":"accept"},{"type":"ignore"}]`, []string{"approve", "reject"}, ""},
		{"decision", `{"decision":"reject"}`, []string{"reject", "reject"}, ""},
		{"edit", `{"type":"edit","args":{"args":{"path":"c"}}}`, []string{"edit", "edit"}, ""},
		{"explicit", `{"approvals":[{"call_id":"c1","decision":"approve"},{"call_id":"c2","decision":"reject"}]}`, []string{"approve", "reject"}, ""},
		{"unknown type", `{"type":"maybe"}`, nil, "command.resume.type"},
		{"edit without args", `{"type":"edit"}`, nil, "command.resume.args.args"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, err := resumeMessage(waiting, json.RawMessage(c.resume))
			if c.field != "" {
				if errdefs.FieldOf(err) != c.field {
					t.Fatalf("err %v, want one of field %s", err, c.field)
				}
				return
			}
			answers, found, err := engine.ApprovalAnswers(m.Parts)
			if err != nil || !found || len(answers) != len(c.want) {
				t.Fatalf("answers %+v found %v err %v", answers, found, err)
			}
			for i, a := range answers {
				if a.Decision != c.want[i] {
					t.Fatalf("answer %d: %s, want %s", i, a.Decision, c.want[i])
				}
			}
		})
	}
	m, err := resumeMessage(run.Task{State: run.StateInputRequired}, json.RawMessage(`"A-1001"`))
	if err != nil || m.Text() != "A-1001" {
		t.Fatalf("a text answer: %+v, %v", m, err)
	}
}
