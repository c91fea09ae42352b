package api

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/memory"
	"agentd/internal/run"
)

// Memory is the long-term memory this face serves.
type Memory = memory.Memory

// MemoryItemView is a memory item as the API shows it.
type MemoryItemView struct {
	run.MemoryItem
	// ExpiresAt is when the item expires unless written or read with a
	// refresh again; absent: never.
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

func memoryView(it run.MemoryItem) MemoryItemView {
	v := MemoryItemView{MemoryItem: it}
	if !it.ExpiresAt.IsZero() {
		v.ExpiresAt = &it.ExpiresAt
	}
	return v
}

// memory returns the server's memory, NotAvailable when it has none.
func (s *Server) memory() (Memory, error) {
	if s.opts.Memory == nil {
		return nil, errdefs.Public(errdefs.NotAvailablef("this server has no memory store"))
	}
	return s.opts.Memory, nil
}

// putMemoryBody is PUT /v1/memory/items.
type putMemoryBody struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	// TTLMinutes, when set, expires the item that long after its last
	// write or refreshed read.
	TTLMinutes float64 `json:"ttl_minutes"`
	// Index is false (not searchable by query) or the fields to search
	// the item by; absent: the server's default.
	Index json.RawMessage `json:"index"`
}

func (s *Server) putMemory(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b putMemoryBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	p := memory.Put{Namespace: b.Namespace, Key: b.Key, Value: b.Value, TTLMinutes: b.TTLMinutes}
	if p.Index, p.NoIndex, err = memory.ParseIndex(b.Index); err != nil {
		writeError(w, r, err)
		return
	}
	it, err := m.Put(r.Context(), p)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoryView(it))
}

// itemParams reads ?namespace= (labels joined with dots) and ?key=.
func itemParams(r *http.Request) ([]string, string) {
	q := r.URL.Query()
	return memory.SplitNamespace(q.Get("namespace")), q.Get("key")
}

func (s *Server) getMemory(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	refresh, err := boolParam(r.URL.Query(), "refresh_ttl", false)
	if err != nil {
		writeError(w, r, err)
		return
	}
	ns, key := itemParams(r)
	it, err := m.Get(r.Context(), ns, key, refresh)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, memoryView(it))
}

func (s *Server) deleteMemory(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	ns, key := itemParams(r)
	if err := m.Delete(r.Context(), ns, key); err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// searchMemoryBody is POST /v1/memory/items/search.
type searchMemoryBody struct {
	NamespacePrefix []string       `json:"namespace_prefix"`
	Query           string         `json:"query"`
	Filter          map[string]any `json:"filter"`
	Limit           int            `json:"limit"`
	Offset          int            `json:"offset"`
	RefreshTTL      bool           `json:"refresh_ttl"`
}

// MemoryItemList is a page of memory items.
type MemoryItemList struct {
	Items []MemoryItemView `json:"items"`
}

func (s *Server) searchMemory(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b searchMemoryBody
	if err := decodeJSON(w, r, s.opts.MaxBodyBytes, &b); err != nil {
		writeError(w, r, err)
		return
	}
	items, err := m.Search(r.Context(), run.MemorySearch{
		Prefix: b.NamespacePrefix, Query: b.Query, Filter: b.Filter, Limit: b.Limit, Offset: b.Offset, RefreshTTL: b.RefreshTTL,
	})
	if err != nil {
		writeError(w, r, err)
		return
	}
	out := MemoryItemList{Items: make([]MemoryItemView, len(items))}
	for i, it := range items {
		out.Items[i] = memoryView(it)
	}
	writeJSON(w, http.StatusOK, out)
}

func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	nq := run.NamespaceQuery{Prefix: memory.SplitNamespace(q.Get("prefix")), Suffix: memory.SplitNamespace(q.Get("suffix"))}
	for _, p := range []struct {
		name string
		to   *int
	}{{"max_depth", &nq.MaxDepth}, {"limit", &nq.Limit}, {"offset", &nq.Offset}} {
		if v := q.Get(p.name); v != "" {
			if *p.to, err = strconv.Atoi(v); err != nil {
				writeError(w, r, fieldErr(p.name, errdefs.Validationf("must be an integer, got %q", v)))
				return
			}
		}
	}
	nss, err := m.Namespaces(r.Context(), nq)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if nss == nil {
		nss = [][]string{}
	}
	writeJSON(w, http.StatusOK, map[string][][]string{"namespaces": nss})
}
