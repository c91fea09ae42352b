package loop_test

import (
	"testing"

	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/loop"
)

// The loop passes the engine contract: Succeed is a two-round calculator
// conversation (two checkpoints to resume from), Fail a message no rule
// answers, Block a stream that waits a minute after its first token.
func TestEngineContract(t *testing.T) {
	enginetest.RunSuite(t, func(t testing.TB) enginetest.Case {
		return enginetest.Case{
			Engine:  newEngine(t, loop.Config{}),
			Succeed: input("", "what is 6*7?"),
			Fail:    input("", "nothing matches this"),
			Block:   input("", "block"),
		}
	})
}
