package remote

import (
	"context"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/calltree"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// A peer's tokens are the caller's: when the peer task ends, its Task is
// read once more and the usage an agentd peer reports in its metadata
// (calltree.UsageKey) is reported to the host as the usage of model
// "peer:<agent id>" (the local agent that calls the peer), so it counts in this run's totals and budgets and in
// its tenant's. A peer that reports none, or a read that fails, adds
// nothing: the answer stands. The same read gives a failed peer task's
// error class (calltree.ErrorClassKey), which the caller's failure keeps.

// reportPeerUsage reports the ended peer task's usage; the error is the
// host's budget verdict. class is the failed task's error class, when an
// agentd peer says it (calltree.ErrorClassKey).
func (x *attempt) reportPeerUsage(ctx context.Context) (class errdefs.Class, err error) {
	if x.st.TaskID == "" {
		return "", nil
	}
	call, cancel := context.WithTimeout(ctx, x.e.cfg.Timeout)
	defer cancel()
	t, err := x.peer.client.GetTask(call, &a2a.GetTaskRequest{ID: a2a.TaskID(x.st.TaskID)})
	if err != nil || t == nil {
		return "", nil
	}
	if c, ok := t.Metadata[calltree.ErrorClassKey].(string); ok {
		class = errdefs.Class(c)
	}
	u, ok := calltree.ParseUsage(t.Metadata)
	if !ok || u.TotalTokens == 0 {
		return class, nil
	}
	return class, x.host.ReportUsage(ctx, "peer:"+x.e.cfg.AgentID, model.TokenUsage{
		InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, TotalTokens: u.TotalTokens,
	})
}

// peerFailed is the error of a failed peer task: its reason, public, in
// the class the peer gave it (internal when it gave none, or one a
// caller should not take over: a peer's not_available is not ours).
func peerFailed(class errdefs.Class, format string, args ...any) error {
	switch class {
	case "", errdefs.ClassNotAvailable, errdefs.ClassUnauthorized, errdefs.ClassAborted, errdefs.ClassInterrupted:
		class = errdefs.ClassInternal
	}
	return errdefs.Public(errdefs.Newf(class, format, args...))
}
