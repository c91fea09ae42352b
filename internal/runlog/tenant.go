package runlog

import (
	"cmp"
	"context"

	"agentd/internal/run"
)

// SetTenant names the tenant whose store scope l's events are written in.
// The flusher writes from its own goroutine, whose context carries no
// tenant: without it, the events of another tenant's run would be written
// (and refused) under the default tenant.
func (l *Log) SetTenant(tenant string) {
	l.mu.Lock()
	l.tenant = tenant
	l.mu.Unlock()
}

// OpenIn reports whether the run's log is open on this replica with its
// tenant set to tenant (a writer's log: SetTenant): the run exists there,
// and a reader need not look it up. A log a reader opened has no tenant
// and does not count.
func (ls *Logs) OpenIn(runID, tenant string) bool {
	ls.mu.Lock()
	l := ls.open[runID]
	ls.mu.Unlock()
	if l == nil {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.tenant != "" && l.tenant == cmp.Or(tenant, run.DefaultTenant)
}

// scoped is ctx in l's tenant scope.
func (l *Log) scoped(ctx context.Context) context.Context {
	l.mu.Lock()
	t := l.tenant
	l.mu.Unlock()
	if t == "" || t == run.DefaultTenant {
		return ctx
	}
	return run.WithTenant(ctx, t)
}

// batchScope is ctx in the tenant scope the logs share; ok is false when
// they belong to several tenants (each is then written on its own).
func batchScope(ctx context.Context, logs []*Log) (context.Context, bool) {
	first := logs[0].scoped(ctx)
	want := run.TenantFrom(first)
	for _, l := range logs[1:] {
		if run.TenantFrom(l.scoped(ctx)) != want {
			return ctx, false
		}
	}
	return first, true
}
