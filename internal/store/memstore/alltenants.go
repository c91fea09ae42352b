package memstore

import (
	"context"
	"slices"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// ListTasksOfAllTenants implements store.Store: it matches every tenant's
// tasks (a scan: the sweeps that call it read a page per round) and pages
// them in one order, newest first, with ListTasks' cursors.
func (s *Store) ListTasksOfAllTenants(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	if err := live(ctx); err != nil {
		return run.TaskPage{}, err
	}
	if q.ContextID != "" {
		return run.TaskPage{}, errdefs.Validationf("list tasks of all tenants: a context id (%q) names one tenant's context", q.ContextID)
	}
	limit, after, err := checkTaskQuery(q)
	if err != nil {
		return run.TaskPage{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var keys []taskKey
	recs := map[taskKey]string{}
	for _, t := range s.tenants {
		for _, k := range t.allTasks {
			if after != nil && compareKeys(k, *after) >= 0 {
				continue
			}
			if rec := t.task(k.id); rec != "" && matches(rec, q) {
				keys = append(keys, k)
				recs[k] = rec
			}
		}
	}
	slices.SortFunc(keys, func(a, b taskKey) int { return compareKeys(b, a) })
	var page run.TaskPage
	for i, k := range keys {
		if i == limit {
			page.NextCursor = encodeCursor(keys[i-1])
			break
		}
		page.Tasks = append(page.Tasks, readTask(recs[k]))
	}
	return page, nil
}
