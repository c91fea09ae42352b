package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/model"
	runs "agentd/internal/run"
	"agentd/internal/store/pgstore"
)

// report counts what the run did and what the check found.
type report struct {
	mu                                    sync.Mutex
	elapsed                               time.Duration
	runs, restRuns, a2aRuns               int
	disconnects, kills, partitions        int
	dbRestarts, dbStops                   int
	eventsChecked                         int
	lost, duplicated, reordered           int
	stuck, skipped, unframed, orphans     int
	retryMismatches, transcriptMismatches int
	attemptsOverOne                       int
	toolRuns                              int
	effects                               effectTally
	problems                              []string
}

func (r *report) add(n *int, d int) {
	r.mu.Lock()
	*n += d
	r.mu.Unlock()
}

func (r *report) problem(format string, args ...any) {
	if len(r.problems) < 20 {
		r.problems = append(r.problems, fmt.Sprintf(format, args...))
	}
}

func (r *report) clean() bool {
	return r.lost+r.duplicated+r.reordered+r.stuck+r.skipped+r.unframed+r.orphans+r.retryMismatches+r.transcriptMismatches+
		r.effects.duplicates+r.effects.missing+r.effects.phantoms == 0
}

func (r *report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos: %v, %d runs (%d REST, %d A2A), %d resumed after a fault\n", r.elapsed.Round(time.Second), r.runs, r.restRuns, r.a2aRuns, r.attemptsOverOne)
	fmt.Fprintf(&b, "faults: %d client disconnects, %d SIGKILLs, %d partitions, %d database restarts, %d database stops\n",
		r.disconnects, r.kills, r.partitions, r.dbRestarts, r.dbStops)
	fmt.Fprintf(&b, "checked: %d events received by clients\n", r.eventsChecked)
	fmt.Fprintf(&b, "lost %d, duplicated %d, reordered %d, stuck %d, skipped %d, unframed %d, orphaned %d, retry mismatches %d, transcript mismatches %d\n",
		r.lost, r.duplicated, r.reordered, r.stuck, r.skipped, r.unframed, r.orphans, r.retryMismatches, r.transcriptMismatches)
	fmt.Fprintf(&b, "tool effects: %d runs (%d resumed after a fault, %d calls in doubt), %d calls in their logs, %d keys charged (%d requests); duplicated %d, missing %d, phantom %d\n",
		r.toolRuns, r.effects.resumed, r.effects.doubts, r.effects.calls, r.effects.keys, r.effects.requests, r.effects.duplicates, r.effects.missing, r.effects.phantoms)
	for _, p := range r.problems {
		fmt.Fprintf(&b, "  - %s\n", p)
	}
	if r.clean() {
		b.WriteString("PASS\n")
	} else {
		b.WriteString("FAIL\n")
	}
	return b.String()
}

// check compares every run with the store once the runs had a chance to
// finish: the store's log must be dense and framed, every client must have
// received every event exactly once and in order, every run completed with
// the whole answer in its deltas and its transcript, and every idempotent
// resend must have been answered by the same run.
func (e *env) check(ctx context.Context, runs []*clientRun, rep *report) error {
	st, err := pgstore.Open(ctx, e.db.DSN())
	if err != nil {
		return err
	}
	defer st.Close()
	answer := strings.Join(tokensOf(e.o.tokens), " ")
	var tool []*clientRun
	for _, cr := range runs {
		rep.runs++
		rep.disconnects += cr.disconnects
		if cr.a2a {
			rep.a2aRuns++
		} else {
			rep.restRuns++
		}
		if cr.id == "" {
			rep.stuck++
			rep.problem("%s: no replica ever answered its submission", cr.key)
			continue
		}
		e.checkRun(ctx, st, cr, answer, rep)
		if cr.tool {
			tool = append(tool, cr)
		}
	}
	rep.toolRuns = len(tool)
	e.checkEffects(ctx, st, tool, rep)
	return e.checkOrphans(ctx, st, rep)
}

func (e *env) checkRun(ctx context.Context, st *pgstore.Store, cr *clientRun, answer string, rep *report) {
	t := waitTerminal(ctx, st, cr.id, time.Minute)
	if t.State != runs.StateCompleted {
		rep.stuck++
		rep.problem("run %s (%s): %s in attempt %d, want completed", cr.id, cr.key, t.State, t.Attempt)
	}
	if t.Attempt > 1 {
		rep.attemptsOverOne++
	}
	evs, err := readAll(ctx, st, cr.id)
	if err != nil {
		rep.problem("run %s: read its log: %v", cr.id, err)
		rep.unframed++
		return
	}
	if !framed(evs) {
		rep.unframed++
		rep.problem("run %s: its log is not dense or its attempts are not framed by run.start … run.end", cr.id)
	}
	if cr.tool {
		checkToolRun(cr, evs, rep)
		checkREST(cr, evs, rep)
		rep.eventsChecked += len(cr.seqs)
		return
	}
	if !slices.Equal(tokensIn(evs), tokensOf(e.o.tokens)) && !covers(evs, e.o.tokens) {
		rep.skipped++
		rep.problem("run %s: its deltas do not cover the whole answer", cr.id)
	}
	for _, id := range cr.retryIDs {
		if id != cr.id {
			rep.retryMismatches++
			rep.problem("message %s: run %s, but a resend was answered by run %s", cr.key, cr.id, id)
		}
	}
	e.checkTranscript(ctx, st, t, answer, rep)
	rep.eventsChecked += len(cr.seqs)
	if cr.a2a {
		if !checkA2A(cr, answer, rep) {
			rep.problem("  its log: %s", outline(evs))
		}
	} else {
		checkREST(cr, evs, rep)
	}
}

// checkREST: the client received 1…last exactly once, in order.
func checkREST(cr *clientRun, evs []runs.Event, rep *report) {
	want := int64(len(evs))
	seen := map[int64]int{}
	for i, s := range cr.seqs {
		seen[s]++
		if i > 0 && s < cr.seqs[i-1] {
			rep.reordered++
			rep.problem("run %s: the client received seq %d after %d", cr.id, s, cr.seqs[i-1])
		}
	}
	for s := int64(1); s <= want; s++ {
		switch n := seen[s]; {
		case n == 0:
			rep.lost++
			rep.problem("run %s: the client never received seq %d of %d", cr.id, s, want)
		case n > 1:
			rep.duplicated += n - 1
			rep.problem("run %s: the client received seq %d %d times", cr.id, s, n)
		}
	}
}

// checkA2A: updates arrive in strictly increasing seq order, and applying
// them leaves exactly one artifact, the whole answer. (A2A updates are not
// one per event, so density is the log's to show.)
func checkA2A(cr *clientRun, answer string, rep *report) bool {
	for i := 1; i < len(cr.seqs); i++ {
		switch a, b := cr.seqs[i-1], cr.seqs[i]; {
		case b == a:
			rep.duplicated++
			rep.problem("A2A run %s: the update of seq %d arrived twice", cr.id, b)
		case b < a:
			rep.reordered++
			rep.problem("A2A run %s: seq %d arrived after %d", cr.id, b, a)
		}
	}
	var texts []string
	for _, a := range cr.held {
		texts = append(texts, artifactText(a))
	}
	if len(texts) != 1 || texts[0] != answer {
		rep.skipped++
		var lens []int
		for _, t := range texts {
			lens = append(lens, len(t))
		}
		var missing []string
		if len(texts) == 1 {
			have := map[string]bool{}
			for _, w := range strings.Fields(texts[0]) {
				have[w] = true
			}
			for _, w := range strings.Fields(answer) {
				if !have[w] {
					missing = append(missing, w)
				}
			}
		}
		rep.problem("A2A run %s (%d disconnects): the client holds %d artifact(s) of %v bytes, want exactly the answer (%d bytes); %d tokens missing",
			cr.id, cr.disconnects, len(texts), lens, len(answer), len(missing))
		return false
	}
	return true
}

// outline sums a log up: its events but deltas, with their seqs.
func outline(evs []runs.Event) string {
	var b strings.Builder
	deltas := 0
	for _, ev := range evs {
		if ev.Type == "delta" {
			deltas++
			continue
		}
		if deltas > 0 {
			fmt.Fprintf(&b, "%d deltas, ", deltas)
			deltas = 0
		}
		fmt.Fprintf(&b, "%d %s %.300s, ", ev.Seq, ev.Type, ev.Data)
	}
	return b.String()
}

func artifactText(a *a2a.Artifact) string {
	var b strings.Builder
	for _, p := range a.Parts {
		if t, ok := p.Content.(a2a.Text); ok {
			b.WriteString(string(t))
		}
	}
	return b.String()
}

// checkTranscript: the task's answer in the transcript is the answer.
func (e *env) checkTranscript(ctx context.Context, st *pgstore.Store, t runs.Task, answer string, rep *report) {
	tctx := runs.WithTenant(ctx, t.Tenant)
	page, err := st.ListMessages(tctx, runs.MessageQuery{ContextID: t.ContextID, TaskID: t.ID})
	if err != nil {
		rep.problem("run %s: read its transcript: %v", t.ID, err)
		rep.transcriptMismatches++
		return
	}
	var got []string
	for _, m := range page.Messages {
		if m.Role == model.RoleAssistant {
			got = append(got, m.Text())
		}
	}
	if len(got) != 1 || got[0] != answer {
		rep.transcriptMismatches++
		rep.problem("run %s: the transcript holds %d assistant message(s), want one with the answer", t.ID, len(got))
	}
}

// checkOrphans: no task in the store is left unfinished.
func (e *env) checkOrphans(ctx context.Context, st *pgstore.Store, rep *report) error {
	q := runs.TaskQuery{States: []runs.TaskState{runs.StateSubmitted, runs.StateWorking}, Limit: 100}
	page, err := st.ListTasks(ctx, q)
	if err != nil {
		return err
	}
	rep.orphans = page.Total
	for _, t := range page.Tasks {
		rep.problem("task %s is still %s", t.ID, t.State)
	}
	return nil
}

func waitTerminal(ctx context.Context, st *pgstore.Store, id string, within time.Duration) runs.Task {
	deadline := time.Now().Add(within)
	for {
		t, err := st.GetTask(ctx, id)
		if err == nil && t.State.Terminal() || time.Now().After(deadline) || ctx.Err() != nil {
			return t
		}
		time.Sleep(200 * time.Millisecond)
	}
}

func readAll(ctx context.Context, st *pgstore.Store, id string) ([]runs.Event, error) {
	var out []runs.Event
	for after := int64(0); ; {
		page, err := st.ReadEvents(ctx, id, after, 1000)
		if err != nil {
			return nil, err
		}
		if len(page.Events) == 0 {
			return out, nil
		}
		out = append(out, page.Events...)
		after = page.Events[len(page.Events)-1].Seq
	}
}

// framed: seqs 1…n, and the log is attempts each opened by run.start and
// closed by run.end, numbered 1, 2, … .
func framed(evs []runs.Event) bool {
	open, attempt := false, 0
	for i, ev := range evs {
		if ev.Seq != int64(i+1) {
			return false
		}
		switch ev.Type {
		case "run.start":
			var d struct {
				Attempt int `json:"attempt"`
			}
			if open || json.Unmarshal(ev.Data, &d) != nil || d.Attempt <= attempt {
				return false
			}
			open, attempt = true, d.Attempt
		case "run.end":
			if !open {
				return false
			}
			open = false
		default:
			if !open {
				return false
			}
		}
	}
	return !open && attempt > 0
}

// tokensIn lists the words of the log's deltas in order.
func tokensIn(evs []runs.Event) []string {
	var out []string
	for _, ev := range evs {
		if ev.Type != "delta" {
			continue
		}
		var d struct {
			Text string `json:"text"`
		}
		if json.Unmarshal(ev.Data, &d) == nil {
			out = append(out, strings.Fields(d.Text)...)
		}
	}
	return out
}

// covers reports whether every token of the answer is in some delta (an
// attempt cut short streams a prefix that the resumed one streams again).
func covers(evs []runs.Event, n int) bool {
	seen := map[string]bool{}
	for _, w := range tokensIn(evs) {
		seen[w] = true
	}
	for _, tok := range tokensOf(n) {
		if !seen[tok] {
			return false
		}
	}
	return true
}

func tokensOf(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("tok%d", i+1)
	}
	return out
}
