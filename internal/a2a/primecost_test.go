package a2a_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

// countingStore counts the events ReadEvents hands out.
type countingStore struct {
	store.Store
	read atomic.Int64
}

func (s *countingStore) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	page, err := s.Store.ReadEvents(ctx, runID, after, limit)
	s.read.Add(int64(len(page.Events)))
	return page, err
}

// A resume near the end of a long log reads the log back only to the last
// answer boundary, not from the start: its cost does not grow with the log.
func TestResumeReadsBackOnlyToTheAnswerBoundary(t *testing.T) {
	st := &countingStore{Store: memstore.New()}
	e := newEnvOn(t, st, 0, nil)
	c := e.client(t, "echo", bindings[0])
	const n = 3000
	task := taskOf(t, mustSend(t, c, sendReq("stream "+strconv.Itoa(n))))
	st.read.Store(0)
	ref := replay(t, c, task.ID, 0)
	if got := st.read.Load(); got < n {
		t.Fatalf("a replay from the start read %d events from the store, want at least %d (is the log held in memory?)", got, n)
	}
	var last int64
	for _, r := range ref {
		seq, _ := strconv.ParseInt(r[:strings.IndexByte(r, ' ')], 10, 64)
		last = max(last, seq)
	}
	st.read.Store(0)
	got := replay(t, c, task.ID, last-1)
	if read := st.read.Load(); read > 500 {
		t.Errorf("resuming after seq %d of %d read %d events from the store, want a few hundred at most", last-1, last, read)
	}
	if want := ref[len(ref)-len(got):]; strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("resumed updates:\n%s\nthe unbroken stream's last ones:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// Resumed at any cursor of a long answer — near and far from where it
// opened, across the windows in which priming reads the log back — the
// stream sends exactly the unbroken stream's updates after the cursor.
func TestResumeAtEveryDistanceFromTheAnswerStart(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	task := taskOf(t, mustSend(t, c, sendReq("stream 400")))
	ref := replay(t, c, task.ID, 0)
	seqs := make([]int64, len(ref))
	for i, r := range ref {
		seqs[i], _ = strconv.ParseInt(r[:strings.IndexByte(r, ' ')], 10, 64)
	}
	last := seqs[len(seqs)-1]
	for _, after := range []int64{1, 2, 3, 4, 63, 64, 65, 66, 130, 200, 257, 333, last - 3, last - 2, last - 1, last} {
		var want []string
		for i, r := range ref {
			if seqs[i] > after {
				want = append(want, r)
			}
		}
		got := replay(t, c, task.ID, after)
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("resumed after %d:\n%s\nwant:\n%s", after, strings.Join(got, "\n"), strings.Join(want, "\n"))
		}
	}
}
