package memstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/storetest"
)

func TestPrunerContract(t *testing.T) {
	storetest.RunPrunerSuite(t, func(t *testing.T) store.Store { return memstore.New() })
}

// TestPrunerKeepsEveryRun: with count retention off (WithRetention(0)),
// age retention still finds the finished runs.
func TestPrunerKeepsEveryRun(t *testing.T) {
	storetest.RunPrunerSuite(t, func(t *testing.T) store.Store { return memstore.New(memstore.WithRetention(0)) })
}
