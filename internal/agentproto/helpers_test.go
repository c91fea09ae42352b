package agentproto

import (
	"testing"

	"go.uber.org/goleak"

	"agentd/internal/model"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func humanText(s string) model.Message {
	m := model.NewText(model.RoleUser, s)
	m.ID = "m-" + s
	return m
}
