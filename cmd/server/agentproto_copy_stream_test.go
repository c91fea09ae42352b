package main

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestLangGraphSDKCopyStream runs @langchain/langgraph-sdk
// (interop/js/langgraph_copy_stream.mjs) against a real server process: a
// copied thread's history is its source's checkpoints re-rooted on the
// copy (its runs descend from them, a run may fork from one), and the
// desk's hand-offs — to the local assistant and to the echo agent as an
// A2A peer — stream as subgraphs, and the SDK's MessageTupleManager
// assembles the token chunks into the messages of the thread's state.
func TestLangGraphSDKCopyStream(t *testing.T) { testLangGraphSDKCopyStream(t, "") }

// TestLangGraphSDKCopyStreamPostgres is TestLangGraphSDKCopyStream on
// PostgreSQL, where the thread records and checkpoints live in tables.
func TestLangGraphSDKCopyStreamPostgres(t *testing.T) { testLangGraphSDKCopyStream(t, sharedDSN(t)) }

func testLangGraphSDKCopyStream(t *testing.T, dsn string) {
	skipShort(t)
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	r := startReplica(t, "lg", dsn, "")
	nodetest.Run(t, node, dir, r.base, "langgraph_copy_stream.mjs", 2*time.Minute, nil)
}
