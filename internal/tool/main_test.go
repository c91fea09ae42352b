package tool_test

import (
	"testing"

	"go.uber.org/goleak"
)

// ExecuteAll starts goroutines; every one must be gone when it returns.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
