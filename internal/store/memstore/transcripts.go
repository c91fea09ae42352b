package memstore

import (
	"context"
	"slices"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// Transcript page limits (store.MessageQuery).
const (
	defaultMessageLimit = 100
	maxMessageLimit     = 1000
)

// transcript is one context's messages; msgs[i] has position i+1.
type transcript struct {
	msgs []store.Message
	// byTask lists each task's positions, ascending, for the TaskID filter.
	byTask map[string][]int64
}

// transcript returns the transcript of contextID, creating it. Callers hold
// the write lock.
func (t *tenant) transcript(contextID string) *transcript {
	tr := t.transcripts[contextID]
	if tr == nil {
		tr = &transcript{byTask: map[string][]int64{}}
		t.transcripts[contextID] = tr
	}
	return tr
}

func (tr *transcript) append(m store.Message) {
	m.Position = int64(len(tr.msgs)) + 1
	tr.msgs = append(tr.msgs, m)
	if m.TaskID != "" {
		tr.byTask[m.TaskID] = append(tr.byTask[m.TaskID], m.Position)
	}
}

// ListMessages returns a page of a context's transcript in position order.
func (s *Store) ListMessages(ctx context.Context, q store.MessageQuery) (store.MessagePage, error) {
	if err := live(ctx); err != nil {
		return store.MessagePage{}, err
	}
	limit, err := checkMessageQuery(q)
	if err != nil {
		return store.MessagePage{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil || t.transcripts[q.ContextID] == nil {
		return store.MessagePage{}, nil
	}
	return t.transcripts[q.ContextID].page(q, limit), nil
}

// page selects the matching positions after q.After, then their head (up
// to limit) or, with q.Last, their tail.
func (tr *transcript) page(q store.MessageQuery, limit int) store.MessagePage {
	// The candidates are positions at(0) … at(n-1).
	var (
		n  int
		at func(i int) int64
	)
	if q.TaskID == "" {
		first := q.After + 1
		n = max(0, len(tr.msgs)-int(q.After))
		at = func(i int) int64 { return first + int64(i) }
	} else {
		ps := tr.byTask[q.TaskID]
		lo, _ := slices.BinarySearch(ps, q.After+1)
		ps = ps[lo:]
		n = len(ps)
		at = func(i int) int64 { return ps[i] }
	}
	lo, hi := 0, min(n, limit)
	if q.Last > 0 {
		lo, hi = max(0, n-q.Last), n
	}
	var page store.MessagePage
	for i := lo; i < hi; i++ {
		page.Messages = append(page.Messages, outMessage(tr.msgs[at(i)-1]))
	}
	if hi < n {
		page.NextAfter = at(hi - 1)
	}
	return page
}

func checkMessageQuery(q store.MessageQuery) (int, error) {
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
