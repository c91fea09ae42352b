package remote

import (
	"context"
	"strings"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

var _ tool.Reconciler = (*Tool)(nil)

// effectContext is the peer context a call's message goes to (attempt.go):
// derived from its effect key, so that the peer can be asked about it.
func effectContext(key string) string { return "ctx-" + key }

// Reconcile asks the peer whether the call's message started a task
// (the tasks of the call's context, ListTasks): a completed task is the
// effect, its answer the result; no task means the peer never got the
// message. A task still under way, or ended otherwise, leaves the call in
// doubt (an error).
func (t *Tool) Reconcile(ctx context.Context, call tool.Call) (tool.Result, bool, error) {
	if call.IdempotencyKey == "" {
		return tool.Result{}, false, errdefs.Validationf("peer tool %s: a call without an effect key cannot be reconciled", t.spec.Name)
	}
	p, err := t.eng.connect(ctx)
	if err != nil {
		return tool.Result{}, false, err
	}
	res, err := p.client.ListTasks(ctx, &a2a.ListTasksRequest{ContextID: effectContext(call.IdempotencyKey), PageSize: 10, IncludeArtifacts: true})
	if err != nil {
		return tool.Result{}, false, errdefs.NotAvailablef("peer tool %s: list the call's tasks: %v", t.spec.Name, err)
	}
	if len(res.Tasks) == 0 {
		return tool.Result{}, false, nil
	}
	task := res.Tasks[0]
	if task.Status.State != a2a.TaskStateCompleted {
		return tool.Result{}, false, errdefs.Conflictf("peer tool %s: the call's peer task %s is %s", t.spec.Name, task.ID, task.Status.State)
	}
	var b strings.Builder
	for _, a := range task.Artifacts {
		for _, part := range a.Parts {
			b.WriteString(part.Text())
		}
	}
	return tool.Text(strings.TrimSpace(b.String())), true, nil
}
