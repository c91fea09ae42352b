package flow_test

import (
	"testing"

	"agentd/internal/engine/enginetest"
)

// The flow engine passes the engine contract: Succeed is a text node, a
// calculator action and a final text (three checkpoints to resume from),
// Fail an action whose tool fails, Block an action whose tool waits for
// its context.
func TestEngineContract(t *testing.T) {
	enginetest.RunSuite(t, func(t testing.TB) enginetest.Case {
		reg := registry(t, &effects{}, "rent_car")
		eng := newEngine(t, compile(t, "contract.yaml", reg), reg)
		in := func(text string) func() enginetest.Input {
			return func() enginetest.Input { return enginetest.Input{Board: userBoard(text)} }
		}
		return enginetest.Case{Engine: eng, Succeed: in("compute"), Fail: in("fail"), Block: in("block")}
	})
}
