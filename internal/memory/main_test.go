package memory_test

import (
	"testing"

	"agentd/internal/pgtest"
)

// TestMain stops the throwaway PostgreSQL cluster, if the tests started
// one.
func TestMain(m *testing.M) { pgtest.Main(m) }
