package memstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/storetest"
)

func TestThreadsContract(t *testing.T) {
	storetest.RunThreadsSuite(t, func(t *testing.T) store.Threads { return memstore.New() })
}

func TestRunDeleterContract(t *testing.T) {
	storetest.RunRunDeleterSuite(t, func(t *testing.T) storetest.RunDeleterStore { return memstore.New() })
}
