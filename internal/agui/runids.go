package agui

import (
	"context"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// A runId names one AG-UI run in the tenant. A run that starts an agentd
// run gets the runId as its id, so the runtime's task ids keep the fact
// (SendRequest.RunID: a second task of that id is a conflict). A run that
// resumes a parked agentd run — answers to interrupts, frontend tool
// results — is no task of its own: its runId is recorded on the thread's
// record instead (runtime threads, store.Threads: one metadata key per
// runId, runIDKey), before the resume is sent, and a later input that
// would start or resume a run with that runId in another thread is
// refused (409 naming runId). The face keeps no table: the thread records
// are the runtime's, searched by metadata through it. A thread that had
// no record (an AG-UI conversation the Agent Protocol never saw) gets one
// on its first resume.

// runIDKey is the thread-record metadata key that says the thread's
// resume runId is runID ("agentd." keys are hidden from the Agent
// Protocol's thread views).
func runIDKey(runID string) string { return "agentd.ag_ui.run." + runID }

// runIDThread is the thread whose resume used runID ("" when none did).
func (s *Server) runIDThread(ctx context.Context, runID string) (string, error) {
	threads, _, err := s.rt.SearchThreads(ctx, run.ThreadQuery{Metadata: map[string]any{runIDKey(runID): true}, Limit: 1})
	switch {
	case errdefs.IsNotAvailable(err):
		return "", nil // a store without thread records: nothing was recorded
	case err != nil || len(threads) == 0:
		return "", err
	}
	return threads[0].ID, nil
}

// checkRunID refuses runID for thread threadID when a resume in another
// thread used it.
func (s *Server) checkRunID(ctx context.Context, threadID, runID string) error {
	other, err := s.runIDThread(ctx, runID)
	if err != nil || other == "" || other == threadID {
		return err
	}
	return errdefs.WithField("runId", errdefs.Conflictf("run %q is a run of another thread, not %q (it resumed a run of that thread); a runId names one run", runID, threadID))
}

// claimRunID records that thread threadID's resume is AG-UI run runID,
// creating the thread's record when it has none.
func (s *Server) claimRunID(ctx context.Context, threadID, runID string) error {
	if err := s.checkRunID(ctx, threadID, runID); err != nil {
		return err
	}
	md := map[string]any{runIDKey(runID): true}
	_, err := s.rt.UpdateThreadMetadata(ctx, threadID, md)
	if errdefs.IsNotFound(err) {
		_, err = s.rt.CreateThread(ctx, run.Thread{ID: threadID, Metadata: md})
		if errdefs.IsConflict(err) { // created meanwhile
			_, err = s.rt.UpdateThreadMetadata(ctx, threadID, md)
		}
	}
	if errdefs.IsNotAvailable(err) {
		return nil
	}
	return err
}
