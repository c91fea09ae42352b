package main

import "testing"

// TestAGUIRunIDReusePostgres runs @ag-ui/client's runId checks
// (interop/js/agui.mjs runIdReuse) on PostgreSQL, where a resume's runId
// is recorded on the thread's row and searched by its JSONB metadata: a
// runId that resumed a run in one thread is refused (409) for a new run
// and for a resume in another, and the refused run stores nothing.
func TestAGUIRunIDReusePostgres(t *testing.T) {
	skipShort(t)
	node, dir := nodeScript(t, "@ag-ui/client")
	r := startReplica(t, "A", sharedDSN(t), "")
	runNode(t, node, dir, r.base, "agui.mjs", "runIdReuse")
}
