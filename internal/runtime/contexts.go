package runtime

import (
	"context"
	"strings"
	"unicode/utf8"

	"agentd/internal/model"
	"agentd/internal/run"
)

// A conversation (context) has no row of its own: it is the runs and the
// transcript that share its id. ListContexts derives the list from the
// runs, newest first, each conversation at the place of its newest run.

// ContextQuery selects conversations.
type ContextQuery struct {
	// AgentID keeps the conversations that agent took part in, placed at
	// its newest run there.
	AgentID string
	// Cursor continues a previous page (ContextPage.NextCursor).
	Cursor string
	// Limit bounds the page (default 20, at most 100).
	Limit int
}

// ContextSummary is one conversation of a listing.
type ContextSummary struct {
	ID string
	// Latest is the conversation's newest run (of the query's agent).
	Latest run.Task
	// Runs counts the conversation's runs (of the query's agent).
	Runs int
	// Title is the start of the conversation's first message's text.
	Title string
}

// ContextPage is one page of conversations.
type ContextPage struct {
	Contexts []ContextSummary
	// NextCursor continues the listing; empty on the last page.
	NextCursor string
}

// contextScanPages bounds the pages of runs one listing reads: a page may
// then hold fewer conversations than asked, with a cursor to go on.
const contextScanPages = 50

// titleRunes is how much of the first message a title keeps.
const titleRunes = 80

// ListContexts returns a page of the caller's conversations, newest first
// (by their newest run), each once. Its cursor is a cursor of the run
// listing: a conversation met again on a later page is left out there, as
// its newest run was on an earlier one.
func (r *Runtime) ListContexts(ctx context.Context, q ContextQuery) (ContextPage, error) {
	limit := q.Limit
	if limit <= 0 {
		limit = 20
	}
	limit = min(limit, 100)
	var out ContextPage
	seen := make(map[string]bool)
	cursor := q.Cursor
	for pages := 0; pages < contextScanPages && len(out.Contexts) < limit; pages++ {
		// Never more runs than conversations still wanted: the page is
		// read whole, and the next one starts at its cursor.
		page, err := r.st.ListTasks(ctx, run.TaskQuery{AgentID: q.AgentID, Cursor: cursor, Limit: limit - len(out.Contexts)})
		if err != nil {
			return ContextPage{}, err
		}
		for _, t := range page.Tasks {
			if seen[t.ContextID] {
				continue
			}
			seen[t.ContextID] = true
			sum, newest, err := r.contextSummary(ctx, t, q.AgentID)
			if err != nil {
				return ContextPage{}, err
			}
			if newest {
				out.Contexts = append(out.Contexts, sum)
			}
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	out.NextCursor = cursor
	return out, nil
}

// contextSummary summarises t's conversation, and reports whether t is its
// newest run (else the conversation belongs to an earlier page).
func (r *Runtime) contextSummary(ctx context.Context, t run.Task, agentID string) (ContextSummary, bool, error) {
	latest, err := r.st.ListTasks(ctx, run.TaskQuery{ContextID: t.ContextID, AgentID: agentID, Limit: 1})
	if err != nil {
		return ContextSummary{}, false, err
	}
	if len(latest.Tasks) == 0 || latest.Tasks[0].ID != t.ID {
		return ContextSummary{}, false, nil
	}
	first, err := r.st.ListMessages(ctx, run.MessageQuery{ContextID: t.ContextID, Limit: 1})
	if err != nil {
		return ContextSummary{}, false, err
	}
	sum := ContextSummary{ID: t.ContextID, Latest: t, Runs: latest.Total}
	if len(first.Messages) > 0 {
		sum.Title = title(first.Messages[0].Message)
	}
	return sum, true, nil
}

// title is the start of m's text on one line.
func title(m model.Message) string {
	s := strings.Join(strings.Fields(m.Text()), " ")
	if utf8.RuneCountInString(s) <= titleRunes {
		return s
	}
	runes := []rune(s)
	return string(runes[:titleRunes-1]) + "…"
}
