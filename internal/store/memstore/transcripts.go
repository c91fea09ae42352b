package memstore

import (
	"context"
	"slices"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
)

// Transcript page limits (run.MessageQuery).
const (
	defaultMessageLimit = 100
	maxMessageLimit     = 1000
)

// transcript is one context's messages, as records (putStoredMessage):
// msgs[i] has position i+1.
type transcript struct {
	msgs []string
	// tasks locates each task's messages for the TaskID filter.
	tasks []taskSpan
	// deleted counts the messages of deleted runs (deleteTask): their
	// records are empty, and their positions are skipped.
	deleted int
}

// taskSpan says that a task's messages lie between positions first and
// last, inclusive; messages of other tasks may lie between them too.
type taskSpan struct {
	id          string
	first, last int64
}

// storedMessage is a transcript message validated and encoded, ready to
// be appended.
type storedMessage struct {
	contextID, taskID string
	record            string
}

// putStoredMessage appends a transcript message to a record: its task id,
// then the message. Its position is that of the record in the transcript,
// its context the transcript's.
func putStoredMessage(b []byte, m run.Message, field fieldName) ([]byte, error) {
	return putMessage(putString(b, m.TaskID), m.Message, field)
}

// message decodes the record at position pos of the transcript of
// contextID, taking its parts from parts while they fit (newParts).
func (tr *transcript) message(contextID string, pos int64, parts *[]model.Part) run.Message {
	r := reader{s: tr.msgs[pos-1]}
	return run.Message{ContextID: contextID, TaskID: r.str(), Position: pos, Message: r.message(parts)}
}

// taskOf returns the task id of the message at position pos.
func (tr *transcript) taskOf(pos int64) string {
	if tr.msgs[pos-1] == "" {
		return "" // a deleted run's
	}
	r := reader{s: tr.msgs[pos-1]}
	return r.str()
}

func (tr *transcript) append(m storedMessage) {
	tr.msgs = append(tr.msgs, m.record)
	pos := int64(len(tr.msgs))
	if m.taskID == "" {
		return
	}
	if sp := tr.span(m.taskID); sp != nil {
		sp.last = pos
		return
	}
	tr.tasks = append(tr.tasks, taskSpan{m.taskID, pos, pos})
}

// span returns the span of taskID, or nil. The newest task is the one
// asked about most, so the search starts from it.
func (tr *transcript) span(taskID string) *taskSpan {
	for i := len(tr.tasks) - 1; i >= 0; i-- {
		if tr.tasks[i].id == taskID {
			return &tr.tasks[i]
		}
	}
	return nil
}

// forgetTask stops listing the messages of taskID under it; they stay in
// the context's history.
func (tr *transcript) forgetTask(taskID string) {
	// A task has one span at most; the oldest are forgotten first, so the
	// search starts from them.
	if i := slices.IndexFunc(tr.tasks, func(sp taskSpan) bool { return sp.id == taskID }); i >= 0 {
		tr.tasks = slices.Delete(tr.tasks, i, i+1)
	}
}

// ListMessages returns a page of a context's transcript in position order.
func (s *Store) ListMessages(ctx context.Context, q run.MessageQuery) (run.MessagePage, error) {
	if err := live(ctx); err != nil {
		return run.MessagePage{}, err
	}
	limit, err := checkMessageQuery(q)
	if err != nil {
		return run.MessagePage{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil || t.contexts[q.ContextID] == nil {
		return run.MessagePage{}, nil
	}
	return t.contexts[q.ContextID].transcript.page(q, limit), nil
}

// page selects the matching positions after q.After, then their head (up
// to limit) or, with q.Last, their tail.
func (tr *transcript) page(q run.MessageQuery, limit int) run.MessagePage {
	// The candidates are positions at(0) … at(n-1).
	var (
		n  int
		at func(i int) int64
	)
	if q.TaskID == "" && tr.deleted > 0 {
		ps := tr.livePositions(q.After)
		n = len(ps)
		at = func(i int) int64 { return ps[i] }
	} else if q.TaskID == "" {
		first := q.After + 1
		n = max(0, len(tr.msgs)-int(q.After))
		at = func(i int) int64 { return first + int64(i) }
	} else {
		ps := make([]int64, 0, 16) // on the stack while a task has few messages
		if sp := tr.span(q.TaskID); sp != nil {
			for pos := max(sp.first, q.After+1); pos <= sp.last; pos++ {
				if tr.taskOf(pos) == q.TaskID {
					ps = append(ps, pos)
				}
			}
		}
		n = len(ps)
		at = func(i int) int64 { return ps[i] }
	}
	lo, hi := 0, min(n, limit)
	if q.Last > 0 {
		lo, hi = max(0, n-q.Last), n
	}
	var page run.MessagePage
	if hi > lo {
		page.Messages = make([]run.Message, 0, hi-lo)
	}
	parts := make([]model.Part, 0, hi-lo) // most messages have one part
	for i := lo; i < hi; i++ {
		page.Messages = append(page.Messages, tr.message(q.ContextID, at(i), &parts))
	}
	if hi < n {
		page.NextAfter = at(hi - 1)
	}
	return page
}

func checkMessageQuery(q run.MessageQuery) (int, error) {
	switch {
	case q.ContextID == "":
		return 0, errdefs.Validationf("list messages: context id is required")
	case q.After < 0 || q.Last < 0 || q.Limit < 0:
		return 0, errdefs.Validationf("list messages of context %q: after (%d), last (%d) and limit (%d) must not be negative", q.ContextID, q.After, q.Last, q.Limit)
	case q.Limit == 0:
		return defaultMessageLimit, nil
	}
	return min(q.Limit, maxMessageLimit), nil
}
