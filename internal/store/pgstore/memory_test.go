package pgstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/storetest"
)

func TestMemoryContract(t *testing.T) {
	storetest.RunMemorySuite(t, func(t *testing.T) store.Memory { return open(t) })
}
