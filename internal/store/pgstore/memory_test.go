package pgstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/pgstore"
	"agentd/internal/store/storetest"
)

// TestMemoryContract runs the contract on the store as Open makes it:
// vector searches ranked by the vector extension where the database has
// it, in the server elsewhere.
func TestMemoryContract(t *testing.T) {
	storetest.RunMemorySuite(t, func(t *testing.T) store.Memory {
		s := open(t)
		if inSQL, why := s.VectorSearch(); !inSQL {
			t.Logf("vector searches are ranked in the server: %s", why)
		}
		return s
	})
}

// TestMemoryContractInServer runs the contract with vector searches
// ranked in the server, wherever the tests run.
func TestMemoryContractInServer(t *testing.T) {
	storetest.RunMemorySuite(t, func(t *testing.T) store.Memory { return open(t, pgstore.WithoutVectorExtension()) })
}
