package main

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestLangGraphSDKLineage runs @langchain/langgraph-sdk
// (interop/js/langgraph_lineage.mjs) against a real server process: a
// copied thread's history is its source's checkpoints re-rooted on the
// copy (its runs descend from them, a run may fork from one), and the
// desk's hand-offs — to the local assistant and to the echo agent as an
// A2A peer — stream as subgraphs.
func TestLangGraphSDKLineage(t *testing.T) { testLangGraphSDKLineage(t, "") }

// TestLangGraphSDKLineagePostgres is TestLangGraphSDKLineage on
// PostgreSQL, where the thread records and checkpoints live in tables.
func TestLangGraphSDKLineagePostgres(t *testing.T) { testLangGraphSDKLineage(t, sharedDSN(t)) }

func testLangGraphSDKLineage(t *testing.T, dsn string) {
	skipShort(t)
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	r := startReplica(t, "lg", dsn, "")
	nodetest.Run(t, node, dir, r.base, "langgraph_lineage.mjs", 2*time.Minute, nil)
}
