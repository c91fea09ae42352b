package a2a_test

import (
	"errors"
	"testing"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
)

// Every part kind of the spec reaches the agent (the echo agent answers a
// message without text with what it was given), and a part in a media type
// the agent's card does not list is refused up front with the spec's
// ContentTypeNotSupportedError, creating nothing.
func TestContentTypes(t *testing.T) {
	e := newEnv(t)
	for _, b := range bindings {
		t.Run(b.name, func(t *testing.T) {
			c := e.client(t, "echo", b)
			for _, tc := range []struct {
				name string
				part *a2a.Part
				want string
			}{
				{"data", a2a.NewDataPart(map[string]any{"a": 1}), `{"a":1}`},
				{"raw text file", &a2a.Part{Content: a2a.Raw([]byte("hello")), Filename: "a.txt", MediaType: "text/plain"}, "hello"},
			} {
				res := mustSend(t, c, &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, tc.part)})
				task := taskOf(t, res)
				if task.Status.State != a2a.TaskStateCompleted || len(task.Artifacts) != 1 {
					t.Fatalf("%s: %s with %d artifacts, want completed with the answer", tc.name, task.Status.State, len(task.Artifacts))
				}
				if got := task.Artifacts[0].Parts[0].Text(); tc.name == "data" && got != tc.want {
					t.Errorf("%s: answer %q, want %q", tc.name, got, tc.want)
				}
			}
			before, _ := e.rt.ListTasks(ctxT(t), run.TaskQuery{})
			img := &a2a.Part{Content: a2a.URL("https://example.com/a.png"), Filename: "a.png", MediaType: "image/png"}
			_, err := c.SendMessage(ctxT(t), &a2a.SendMessageRequest{Message: a2a.NewMessage(a2a.MessageRoleUser, img)})
			if !errors.Is(err, a2a.ErrUnsupportedContentType) {
				t.Fatalf("an image to the echo agent: %v, want ContentTypeNotSupportedError", err)
			}
			after, _ := e.rt.ListTasks(ctxT(t), run.TaskQuery{})
			if after.Total != before.Total {
				t.Errorf("the refused message created %d tasks", after.Total-before.Total)
			}
		})
	}
}
