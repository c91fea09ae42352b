package runtime

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"agentd/internal/model"
	"agentd/internal/store"
)

// TestListContexts lists conversations on both stores: newest first by
// their newest run, each once across pages of one, filtered by agent,
// titled by their first message.
func TestListContexts(t *testing.T) {
	sharedStores(t, func(t *testing.T, st store.Store) {
		r := newTestRuntime(t, st, testAgent("a", streamer(1, nil)), testAgent("b", streamer(1, nil)))
		var ctxs []string
		for i := range 3 {
			task := send(t, r, "a", fmt.Sprintf("first message of conversation %d, long enough to be cut somewhere after eighty characters", i))
			wait(t, r, task.ID)
			ctxs = append(ctxs, task.ContextID)
		}
		// Conversation 0 gets a newer run, of agent b.
		sub, err := r.Send(ctxT(t), SendRequest{AgentID: "b", ContextID: ctxs[0], Message: model.NewText(model.RoleUser, "again")})
		if err != nil {
			t.Fatal(err)
		}
		wait(t, r, sub.Task.ID)

		var got []ContextSummary
		q := ContextQuery{Limit: 1}
		for range 10 {
			page, err := r.ListContexts(ctxT(t), q)
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, page.Contexts...)
			if q.Cursor = page.NextCursor; q.Cursor == "" {
				break
			}
		}
		var ids []string
		for _, c := range got {
			ids = append(ids, c.ID)
		}
		if want := []string{ctxs[0], ctxs[2], ctxs[1]}; !slices.Equal(ids, want) {
			t.Fatalf("contexts %v, want %v", ids, want)
		}
		if c := got[0]; c.Runs != 2 || c.Latest.ID != sub.Task.ID || !strings.HasPrefix(c.Title, "first message of conversation 0") ||
			!strings.HasSuffix(c.Title, "…") || len([]rune(c.Title)) != titleRunes {
			t.Errorf("newest conversation %+v (title %q)", c, c.Title)
		}

		onlyA, err := r.ListContexts(ctxT(t), ContextQuery{AgentID: "a"})
		if err != nil {
			t.Fatal(err)
		}
		if len(onlyA.Contexts) != 3 || onlyA.Contexts[2].ID != ctxs[0] || onlyA.Contexts[2].Runs != 1 {
			t.Errorf("agent a's conversations: %+v", onlyA.Contexts)
		}
	})
}
