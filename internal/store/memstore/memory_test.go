package memstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/storetest"
)

func TestMemoryContract(t *testing.T) {
	storetest.RunMemorySuite(t, func(t *testing.T) store.Memory { return memstore.New() })
}
