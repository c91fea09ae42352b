package goal

import (
	"testing"

	"agentd/internal/engine/enginetest"
)

// The engine passes the engine contract: Succeed plans a two-step
// workflow and runs it (checkpoints after the plan and after every step
// to resume from), Fail is a planner that never writes a valid workflow,
// Block a plan whose step waits until the run stops.
func TestEngineContract(t *testing.T) {
	const blocking = "```yaml\nname: wait\nsteps:\n  - {id: wait, agent: blocker, instructions: Wait.}\n```"
	const broken = "name: broken\nsteps: []"
	input := func(text string) func() enginetest.Input {
		return func() enginetest.Input { return enginetest.Input{Board: goalBoard(text)} }
	}
	enginetest.RunSuite(t, func(t testing.TB) enginetest.Case {
		p := &switchPlanner{plans: map[string]string{"go": validPlan, "fail": broken, "block": blocking}}
		return enginetest.Case{
			Engine:  newEngine(t, p, &stepAgents{}, false),
			Succeed: input("go"),
			Fail:    input("fail"),
			Block:   input("block"),
		}
	})
}
