package api

import (
	"net/http/httptest"
	"testing"
	"time"

	"agentd/internal/model"
	"agentd/internal/run"
)

// BenchmarkWriteRunView is the answer of a blocking echo send.
func BenchmarkWriteRunView(b *testing.B) {
	at := time.Now().UTC()
	v := &RunView{ID: "01a22458-bedb-7002-b349-077841c8b54c", ContextID: "01a22458-bedb-7001-a2c0-f292cf721aff", AgentID: "echo",
		Status: run.StateCompleted, Attempt: 1, CreatedAt: at, UpdatedAt: at,
		Usage: model.TokenUsage{InputTokens: 2, OutputTokens: 2, TotalTokens: 4},
		Messages: []model.Message{
			{ID: "01a22458-bedb-7000-a5a2-292b6da936fd", Role: model.RoleUser, Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
			{ID: "01a22458-bedb-7003-b895-eaa09e729bd7", Role: model.RoleAssistant, Name: "echo", Parts: []model.Part{model.TextPart("hello world")}, CreatedAt: at},
		}}
	b.ReportAllocs()
	for b.Loop() {
		writeRunView(httptest.NewRecorder(), 200, v)
	}
}
