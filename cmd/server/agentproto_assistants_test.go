package main

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestLangGraphAssistants runs @langchain/langgraph-sdk's assistants client
// (interop/js/langgraph_assistants.mjs) against a real server on memstore
// with two tenants: versions created, updated, listed and set latest, each
// run showing its version's system prompt and model; refused overrides
// naming their field with nothing stored; tenant isolation.
func TestLangGraphAssistants(t *testing.T) { testLangGraphAssistants(t, "") }

// TestLangGraphAssistantsPostgres is TestLangGraphAssistants on PostgreSQL.
func TestLangGraphAssistantsPostgres(t *testing.T) { testLangGraphAssistants(t, sharedDSN(t)) }

func testLangGraphAssistants(t *testing.T, dsn string) {
	skipShort(t)
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	s := startWithAuth(t, dsn, authYAML)
	nodetest.Run(t, node, dir, s.base, "langgraph_assistants.mjs", 2*time.Minute,
		[]string{"ACME_KEY=" + acmeKey, "GLOBEX_KEY=" + globexKey})
}
