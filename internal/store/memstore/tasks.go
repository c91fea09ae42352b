package memstore

import (
	"cmp"
	"context"
	"encoding/base64"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// Task listing limits (run.TaskQuery).
const (
	defaultTaskLimit = 50
	maxTaskLimit     = 100
)

// taskKey orders tasks by creation, then id; it is also what a cursor
// encodes.
type taskKey struct {
	created int64 // CreatedAt in Unix microseconds
	id      string
}

// compareKeys orders a and b by taskKey. It compares the ids only when
// the times tie, which they rarely do: cmp.Or would compare them always.
func compareKeys(a, b taskKey) int {
	if c := cmp.Compare(a.created, b.created); c != 0 {
		return c
	}
	return strings.Compare(a.id, b.id)
}

// taskIndex is a set of tasks sorted by taskKey, oldest first. Tasks mostly
// arrive newest, so an insertion is usually an append.
type taskIndex []taskKey

func (x *taskIndex) insert(k taskKey) {
	if n := len(*x); n == 0 || compareKeys((*x)[n-1], k) < 0 {
		*x = append(*x, k)
		return
	}
	i, _ := slices.BinarySearchFunc(*x, k, compareKeys)
	*x = slices.Insert(*x, i, k)
}

// remove removes k from x, if x holds it.
func (x *taskIndex) remove(k taskKey) {
	if i, ok := slices.BinarySearchFunc(*x, k, compareKeys); ok {
		*x = slices.Delete(*x, i, i+1)
	}
}

// removeSorted removes the keys of gone, which is sorted, from x, in one
// pass that compares keys rather than looking tasks up.
func (x *taskIndex) removeSorted(gone []taskKey) {
	*x = slices.DeleteFunc(*x, func(k taskKey) bool {
		for len(gone) > 0 && compareKeys(gone[0], k) < 0 {
			gone = gone[1:]
		}
		return len(gone) > 0 && gone[0] == k
	})
}

// insertTask stores a new task in its run r and indexes it, in the
// tenant's index and its context c's. Callers hold the write lock.
func (t *tenant) insertTask(r *runEntry, c *contextRecords, h taskHeader, record string) {
	r.setTask(record, h.state)
	t.allTasks.insert(h.key())
	c.tasks.insert(h.key())
}

// GetTask returns the task id of ctx's tenant.
func (s *Store) GetTask(ctx context.Context, id string) (run.Task, error) {
	if err := live(ctx); err != nil {
		return run.Task{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.readTenant(ctx); t != nil {
		if task := t.task(id); task != "" {
			return readTask(task), nil
		}
	}
	return run.Task{}, errdefs.NotFoundf("task %q not found", id)
}

// ListTasks returns a page of ctx's tenant's tasks matching q, newest first
// (ties by id, descending).
func (s *Store) ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error) {
	if err := live(ctx); err != nil {
		return run.TaskPage{}, err
	}
	limit, after, err := checkTaskQuery(q)
	if err != nil {
		return run.TaskPage{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil {
		return run.TaskPage{}, nil
	}
	idx := t.allTasks
	if q.ContextID != "" {
		idx = nil
		if c := t.contexts[q.ContextID]; c != nil {
			idx = c.tasks
		}
	}
	return t.listTasks(idx, q, limit, after), nil
}

// listTasks returns the page of idx below after. When only the context
// filters, the page is a slice of idx and Total its size; otherwise every
// task of idx is matched to count Total.
func (t *tenant) listTasks(idx taskIndex, q run.TaskQuery, limit int, after *taskKey) run.TaskPage {
	end := len(idx) // idx[:end] is below the cursor
	if after != nil {
		end, _ = slices.BinarySearchFunc(idx, *after, compareKeys)
	}
	var page run.TaskPage
	more := false
	if q.AgentID == "" && len(q.States) == 0 && q.UpdatedAfter.IsZero() {
		page.Total = len(idx)
		lo := max(0, end-limit)
		for i := end - 1; i >= lo; i-- {
			page.Tasks = append(page.Tasks, readTask(t.task(idx[i].id)))
		}
		more = lo > 0
	} else {
		for i := len(idx) - 1; i >= 0; i-- {
			task := t.task(idx[i].id)
			if !matches(task, q) {
				continue
			}
			page.Total++
			switch {
			case i >= end:
			case len(page.Tasks) < limit:
				page.Tasks = append(page.Tasks, readTask(task))
			default:
				more = true
			}
		}
	}
	if more {
		last := page.Tasks[len(page.Tasks)-1]
		page.NextCursor = encodeCursor(taskKey{last.CreatedAt.UnixMicro(), last.ID})
	}
	return page
}

// checkTaskQuery validates q and returns its effective limit and the key
// its cursor continues after (nil for the first page).
func checkTaskQuery(q run.TaskQuery) (int, *taskKey, error) {
	for _, st := range q.States {
		if !st.Valid() {
			return 0, nil, errdefs.Validationf("list tasks: unknown state %q", st)
		}
	}
	limit := q.Limit
	switch {
	case limit < 0:
		return 0, nil, errdefs.Validationf("list tasks: negative limit %d", limit)
	case limit == 0:
		limit = defaultTaskLimit
	case limit > maxTaskLimit:
		limit = maxTaskLimit
	}
	if q.Cursor == "" {
		return limit, nil, nil
	}
	k, err := decodeCursor(q.Cursor)
	if err != nil {
		return 0, nil, errdefs.Validationf("list tasks: cursor %q: %w", q.Cursor, err)
	}
	return limit, &k, nil
}

// A cursor is base64url("<created micros>:<id>") of the last task returned.
func encodeCursor(k taskKey) string {
	return base64.RawURLEncoding.EncodeToString([]byte(strconv.FormatInt(k.created, 10) + ":" + k.id))
}

func decodeCursor(c string) (taskKey, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return taskKey{}, fmt.Errorf("not a cursor of this store")
	}
	micros, id, ok := strings.Cut(string(b), ":")
	created, err := strconv.ParseInt(micros, 10, 64)
	if !ok || err != nil || id == "" {
		return taskKey{}, fmt.Errorf("not a cursor of this store")
	}
	return taskKey{created, id}, nil
}
