package main

import (
	"testing"
	"time"

	"agentd/internal/nodetest"
)

// TestLangGraphSDKCrons runs @langchain/langgraph-sdk's crons client
// (interop/js/langgraph_crons.mjs) against a real server process on
// memstore: create with an end date, createForThread, search, count,
// delete, and a bad schedule refused with nothing stored.
func TestLangGraphSDKCrons(t *testing.T) { testLangGraphSDKCrons(t, "") }

// TestLangGraphSDKCronsPostgres is TestLangGraphSDKCrons on PostgreSQL.
func TestLangGraphSDKCronsPostgres(t *testing.T) { testLangGraphSDKCrons(t, sharedDSN(t)) }

func testLangGraphSDKCrons(t *testing.T, dsn string) {
	skipShort(t)
	node, dir := nodetest.Find(t, "@langchain/langgraph-sdk")
	r := startReplica(t, "crons", dsn, writeConfig(t, nil))
	nodetest.Run(t, node, dir, r.base, "langgraph_crons.mjs", time.Minute, nil)
}
