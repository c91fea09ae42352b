package pgstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/storetest"
)

func TestPrunerContract(t *testing.T) {
	storetest.RunPrunerSuite(t, func(t *testing.T) store.Store { return open(t) })
}
