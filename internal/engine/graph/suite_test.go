package graph

import (
	"context"
	"strings"
	"testing"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/model"
)

// The engine passes the engine contract: Succeed is a three-step chain
// (a checkpoint per step to resume from), Fail a step whose agent
// breaks, Block a step whose agent waits for an interrupt.
func TestEngineContract(t *testing.T) {
	const doc = `
name: contract
agents:
  worker: {description: works}
  broken: {description: breaks}
  stuck: {description: waits}
steps:
  - {id: a, agent: worker, instructions: first}
  - {id: b, agent: worker, instructions: second, dependsOn: [a]}
  - {id: c, agent: worker, instructions: third, dependsOn: [b]}
  - {id: broken, agent: broken, condition: "steps.a.content == 'fail'", dependsOn: [a]}
  - {id: stuck, agent: stuck, condition: "steps.a.content == 'block'", dependsOn: [a]}
`
	input := func(text string) func() enginetest.Input {
		return func() enginetest.Input {
			b := engine.NewBoard()
			b.AppendChannelMessage(engine.MainChannel, model.NewText(model.RoleUser, text))
			return enginetest.Input{Board: b}
		}
	}
	enginetest.RunSuite(t, func(t testing.TB) enginetest.Case {
		agents := newFakeAgents(map[string]behaviour{"broken": fail, "stuck": block,
			"worker": func(_ context.Context, c call) (string, error) {
				if c.Step == "a" {
					return requestOf(c.Prompt), nil
				}
				return "did " + c.Step, nil
			}})
		return enginetest.Case{
			Engine:  newTestEngine(t, doc, agents),
			Succeed: input("go"),
			Fail:    input("fail"),
			Block:   input("block"),
		}
	})
}

// requestOf is the user's request a step's prompt carries.
func requestOf(prompt string) string {
	_, req, _ := strings.Cut(prompt, "## Request\n")
	req, _, _ = strings.Cut(req, "\n")
	return req
}
