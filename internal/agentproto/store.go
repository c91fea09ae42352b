package agentproto

import (
	"encoding/json"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5"

	"agentd/internal/errdefs"
	"agentd/internal/memory"
	"agentd/internal/run"
)

// Memory is the long-term memory this face serves.
type Memory = memory.Memory

// mountStore declares the store routes: LangGraph's Store as agentd's
// long-term memory.
func (s *Server) mountStore(r chi.Router) {
	r.Put("/store/items", s.putItem)
	r.Get("/store/items", s.getItem)
	r.Delete("/store/items", s.deleteItem)
	r.Post("/store/items/search", s.searchItems)
	r.Post("/store/namespaces", s.listNamespaces)
}

// memory returns the face's memory, NotAvailable when it has none.
func (s *Server) memory() (Memory, error) {
	if s.opts.Memory == nil {
		return nil, errdefs.Public(errdefs.NotAvailablef("this server has no memory store"))
	}
	return s.opts.Memory, nil
}

// putItemBody is what client.store.putItem sends; ttl is in minutes.
type putItemBody struct {
	Namespace []string        `json:"namespace"`
	Key       string          `json:"key"`
	Value     map[string]any  `json:"value"`
	Index     json.RawMessage `json:"index"`
	TTL       *float64        `json:"ttl"`
}

// putItem stores an item whole (204, as LangGraph servers answer).
func (s *Server) putItem(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b putItemBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	p := memory.Put{Namespace: b.Namespace, Key: b.Key, Value: b.Value}
	if b.TTL != nil {
		p.TTLMinutes = *b.TTL
	}
	if p.Index, p.NoIndex, err = memory.ParseIndex(b.Index); err == nil {
		_, err = m.Put(r.Context(), p)
	}
	if err != nil {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// getItem answers the item, or null when there is none (the SDK's getItem
// then returns null).
func (s *Server) getItem(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	q := r.URL.Query()
	refresh := false
	if v := q.Get("refresh_ttl"); v != "" {
		if refresh, err = strconv.ParseBool(v); err != nil {
			writeError(w, r, badInput("refresh_ttl", "want true or false, got %q", v))
			return
		}
	}
	it, err := m.Get(r.Context(), memory.SplitNamespace(q.Get("namespace")), q.Get("key"), refresh)
	switch {
	case errdefs.IsNotFound(err):
		writeJSON(w, http.StatusOK, nil)
	case err != nil:
		writeError(w, r, err)
	default:
		writeJSON(w, http.StatusOK, it)
	}
}

type deleteItemBody struct {
	Namespace []string `json:"namespace"`
	Key       string   `json:"key"`
}

// deleteItem deletes the item; deleting one that is not there is not an
// error (204 either way).
func (s *Server) deleteItem(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b deleteItemBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	if err := m.Delete(r.Context(), b.Namespace, b.Key); err != nil && !errdefs.IsNotFound(err) {
		writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

type searchItemsBody struct {
	NamespacePrefix []string       `json:"namespace_prefix"`
	Filter          map[string]any `json:"filter"`
	Limit           *int           `json:"limit"`
	Offset          int            `json:"offset"`
	Query           string         `json:"query"`
	RefreshTTL      bool           `json:"refresh_ttl"`
}

// searchItems answers {"items": […]}, each with its score when ranked.
func (s *Server) searchItems(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b searchItemsBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	q := run.MemorySearch{Prefix: b.NamespacePrefix, Filter: b.Filter, Offset: b.Offset, Query: b.Query, RefreshTTL: b.RefreshTTL}
	if b.Limit != nil {
		if q.Limit = *b.Limit; q.Limit == 0 {
			writeJSON(w, http.StatusOK, map[string][]run.MemoryItem{"items": {}})
			return
		}
	}
	items, err := m.Search(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if items == nil {
		items = []run.MemoryItem{}
	}
	writeJSON(w, http.StatusOK, map[string][]run.MemoryItem{"items": items})
}

type listNamespacesBody struct {
	Prefix   []string `json:"prefix"`
	Suffix   []string `json:"suffix"`
	MaxDepth int      `json:"max_depth"`
	Limit    int      `json:"limit"`
	Offset   int      `json:"offset"`
}

// listNamespaces answers {"namespaces": [[…], …]}.
func (s *Server) listNamespaces(w http.ResponseWriter, r *http.Request) {
	m, err := s.memory()
	if err != nil {
		writeError(w, r, err)
		return
	}
	var b listNamespacesBody
	if err := s.decodeBody(w, r, &b); err != nil {
		writeError(w, r, err)
		return
	}
	nss, err := m.Namespaces(r.Context(), run.NamespaceQuery{Prefix: b.Prefix, Suffix: b.Suffix, MaxDepth: b.MaxDepth, Limit: b.Limit, Offset: b.Offset})
	if err != nil {
		writeError(w, r, err)
		return
	}
	if nss == nil {
		nss = [][]string{}
	}
	writeJSON(w, http.StatusOK, map[string][][]string{"namespaces": nss})
}
