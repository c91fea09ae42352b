package storetest

import (
	"context"
	"slices"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// RunAssistantsSuite is the contract of store.Assistants: create (a
// Conflict for an existing id), versions numbered from 1 and kept as
// written, the latest moved by a new version and by SetLatestAssistant,
// delete with every version, search over latest versions with paging, and
// tenancy (another tenant's assistant is not found, whatever the call).
func RunAssistantsSuite(t *testing.T, newStore func(t *testing.T) store.Assistants) {
	t.Run("CreateGetConflict", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		a, err := s.CreateAssistant(ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "terse", Version: 7,
			Context: map[string]any{"system_prompt": "be terse"}, Metadata: map[string]any{"team": "red"}})
		if err != nil || a.Version != 1 || a.AgentID != "echo" || a.Context["system_prompt"] != "be terse" || a.CreatedAt.IsZero() {
			t.Fatalf("create = %+v, %v", a, err)
		}
		if _, err := s.CreateAssistant(ctx, run.Assistant{ID: "a1", AgentID: "echo"}); !errdefs.IsConflict(err) {
			t.Fatalf("second create: %v, want Conflict", err)
		}
		got, err := s.GetAssistant(ctx, "a1", 0)
		if err != nil || got.Name != "terse" || got.Metadata["team"] != "red" || !got.CreatedAt.Equal(a.CreatedAt) {
			t.Fatalf("get = %+v, %v", got, err)
		}
		if _, err := s.GetAssistant(ctx, "a1", 2); !errdefs.IsNotFound(err) {
			t.Fatalf("get of a missing version: %v, want NotFound", err)
		}
	})
	t.Run("VersionsAndLatest", func(t *testing.T) { assistantVersions(t, newStore(t)) })
	t.Run("Delete", func(t *testing.T) {
		s, ctx := newStore(t), context.Background()
		mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a1", AgentID: "echo"})
		if _, err := s.AddAssistantVersion(ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "v2"}); err != nil {
			t.Fatal(err)
		}
		if err := s.DeleteAssistant(ctx, "a1"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.GetAssistant(ctx, "a1", 1); !errdefs.IsNotFound(err) {
			t.Fatalf("get after delete: %v, want NotFound", err)
		}
		if err := s.DeleteAssistant(ctx, "a1"); !errdefs.IsNotFound(err) {
			t.Fatalf("second delete: %v, want NotFound", err)
		}
		// The id is free again, from version 1.
		if a := mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a1", AgentID: "echo"}); a.Version != 1 {
			t.Fatalf("re-created at version %d", a.Version)
		}
	})
	t.Run("Search", func(t *testing.T) { assistantSearch(t, newStore(t)) })
	t.Run("Tenancy", func(t *testing.T) { assistantTenancy(t, newStore(t)) })
}

func mustCreateAssistant(t *testing.T, s store.Assistants, ctx context.Context, a run.Assistant) run.Assistant {
	t.Helper()
	out, err := s.CreateAssistant(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// assistantVersions: a new version is numbered next and becomes the
// latest, old versions stay as written, set-latest moves back, and the
// next version still counts from the newest.
func assistantVersions(t *testing.T, s store.Assistants) {
	ctx := context.Background()
	mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "one", Metadata: map[string]any{"v": "1"}})
	v2, err := s.AddAssistantVersion(ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "two",
		Context: map[string]any{"model": "m2"}, Metadata: map[string]any{"v": "2"}})
	if err != nil || v2.Version != 2 || v2.Name != "two" {
		t.Fatalf("add version = %+v, %v", v2, err)
	}
	if latest, err := s.GetAssistant(ctx, "a1", 0); err != nil || latest.Version != 2 || latest.Context["model"] != "m2" {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	if v1, err := s.GetAssistant(ctx, "a1", 1); err != nil || v1.Name != "one" || v1.Context != nil {
		t.Fatalf("version 1 = %+v, %v", v1, err)
	}
	if _, err := s.AddAssistantVersion(ctx, run.Assistant{ID: "nope", AgentID: "echo"}); !errdefs.IsNotFound(err) {
		t.Fatalf("add version to a missing assistant: %v, want NotFound", err)
	}
	set, err := s.SetLatestAssistant(ctx, "a1", 1)
	if err != nil || set.Version != 1 || set.Name != "one" {
		t.Fatalf("set latest = %+v, %v", set, err)
	}
	if latest, _ := s.GetAssistant(ctx, "a1", 0); latest.Version != 1 {
		t.Fatalf("latest after set = %d, want 1", latest.Version)
	}
	if _, err := s.SetLatestAssistant(ctx, "a1", 9); !errdefs.IsNotFound(err) {
		t.Fatalf("set latest to a missing version: %v, want NotFound", err)
	}
	v3, err := s.AddAssistantVersion(ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "three"})
	if err != nil || v3.Version != 3 {
		t.Fatalf("version after set latest = %+v, %v, want 3", v3, err)
	}
	all, err := s.ListAssistantVersions(ctx, "a1", run.AssistantQuery{})
	if err != nil || len(all) != 3 || all[0].Version != 3 || all[2].Version != 1 {
		t.Fatalf("versions = %+v, %v", all, err)
	}
	two, err := s.ListAssistantVersions(ctx, "a1", run.AssistantQuery{Metadata: map[string]any{"v": "2"}})
	if err != nil || len(two) != 1 || two[0].Version != 2 {
		t.Fatalf("versions with v=2 = %+v, %v", two, err)
	}
	page, err := s.ListAssistantVersions(ctx, "a1", run.AssistantQuery{Offset: 1, Limit: 1})
	if err != nil || len(page) != 1 || page[0].Version != 2 {
		t.Fatalf("versions page = %+v, %v", page, err)
	}
	if _, err := s.ListAssistantVersions(ctx, "nope", run.AssistantQuery{}); !errdefs.IsNotFound(err) {
		t.Fatalf("versions of a missing assistant: %v, want NotFound", err)
	}
}

// assistantSearch: by agent, name and metadata of the latest version,
// newest first, paged, the total counted past the last page.
func assistantSearch(t *testing.T, s store.Assistants) {
	ctx := context.Background()
	mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a1", AgentID: "echo", Name: "x", Metadata: map[string]any{"team": "red"}})
	mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a2", AgentID: "echo", Name: "y"})
	mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a3", AgentID: "assistant", Name: "x"})
	if _, err := s.AddAssistantVersion(ctx, run.Assistant{ID: "a2", AgentID: "echo", Name: "y", Metadata: map[string]any{"team": "red"}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		q     run.AssistantQuery
		want  []string
		total int
	}{
		{"all", run.AssistantQuery{}, []string{"a3", "a2", "a1"}, 3},
		{"agent", run.AssistantQuery{AgentID: "echo"}, []string{"a2", "a1"}, 2},
		{"name", run.AssistantQuery{Name: "x"}, []string{"a3", "a1"}, 2},
		{"metadata of the latest", run.AssistantQuery{Metadata: map[string]any{"team": "red"}}, []string{"a2", "a1"}, 2},
		{"page", run.AssistantQuery{Offset: 1, Limit: 1}, []string{"a2"}, 3},
		{"past the end", run.AssistantQuery{Offset: 5}, nil, 3},
	} {
		page, total, err := s.SearchAssistants(ctx, c.q)
		var ids []string
		for _, a := range page {
			ids = append(ids, a.ID)
		}
		if err != nil || total != c.total || !slices.Equal(ids, c.want) {
			t.Errorf("%s: %v (total %d), %v; want %v (total %d)", c.name, ids, total, err, c.want, c.total)
		}
	}
}

// assistantTenancy: every call from another tenant finds nothing, and the
// same id is free in it.
func assistantTenancy(t *testing.T, s store.Assistants) {
	ctx := context.Background()
	other := run.WithTenant(ctx, "other")
	mustCreateAssistant(t, s, ctx, run.Assistant{ID: "a1", AgentID: "echo"})
	if _, err := s.GetAssistant(other, "a1", 0); !errdefs.IsNotFound(err) {
		t.Errorf("get: %v", err)
	}
	if _, err := s.AddAssistantVersion(other, run.Assistant{ID: "a1", AgentID: "echo"}); !errdefs.IsNotFound(err) {
		t.Errorf("add version: %v", err)
	}
	if _, err := s.ListAssistantVersions(other, "a1", run.AssistantQuery{}); !errdefs.IsNotFound(err) {
		t.Errorf("versions: %v", err)
	}
	if _, err := s.SetLatestAssistant(other, "a1", 1); !errdefs.IsNotFound(err) {
		t.Errorf("set latest: %v", err)
	}
	if err := s.DeleteAssistant(other, "a1"); !errdefs.IsNotFound(err) {
		t.Errorf("delete: %v", err)
	}
	if page, total, err := s.SearchAssistants(other, run.AssistantQuery{}); err != nil || total != 0 || len(page) != 0 {
		t.Errorf("search: %v, %d, %v", page, total, err)
	}
	if _, err := s.CreateAssistant(other, run.Assistant{ID: "a1", AgentID: "echo", Name: "theirs"}); err != nil {
		t.Errorf("create of the same id in another tenant: %v", err)
	}
	if a, err := s.GetAssistant(ctx, "a1", 0); err != nil || a.Name != "" {
		t.Errorf("the first tenant's assistant = %+v, %v", a, err)
	}
}
