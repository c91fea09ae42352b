package agentproto

import (
	"context"
	"net/http"
	"strconv"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// scanLimit bounds how many threads a search filtered by status or values
// examines: those filters are computed from each thread's runs.
const scanLimit = 1000

type threadQuery struct {
	Metadata  map[string]any `json:"metadata"`
	IDs       []string       `json:"ids"`
	Status    string         `json:"status"`
	Values    map[string]any `json:"values"`
	Limit     int            `json:"limit"`
	Offset    int            `json:"offset"`
	SortOrder string         `json:"sort_order"`
}

func (q threadQuery) check() error {
	switch runtime.ThreadStatus(q.Status) {
	case "", runtime.ThreadIdle, runtime.ThreadBusy, runtime.ThreadInterrupted, runtime.ThreadError:
	default:
		return badInput("status", "%q: want idle, busy, interrupted or error", q.Status)
	}
	if q.Limit < 0 || q.Offset < 0 {
		return badInput("limit", "limit and offset must not be negative")
	}
	return nil
}

// search returns one page of the matching threads and how many match.
func (s *Server) search(ctx context.Context, q threadQuery) ([]threadJSON, int, error) {
	sq := run.ThreadQuery{IDs: q.IDs, Metadata: q.Metadata, Offset: q.Offset, Limit: q.Limit}
	computed := q.Status != "" || len(q.Values) > 0
	if computed {
		sq.Offset, sq.Limit = 0, scanLimit
	}
	page, total, err := s.rt.SearchThreads(ctx, sq)
	if err != nil {
		return nil, 0, err
	}
	out := make([]threadJSON, 0, len(page))
	for _, th := range page {
		v, err := s.view(ctx, th, len(q.Values) > 0)
		if err != nil {
			return nil, 0, err
		}
		if (q.Status == "" || string(v.Status) == q.Status) && metadataHolds(v.Values, q.Values) {
			out = append(out, v)
		}
	}
	if !computed {
		return out, total, nil
	}
	total = len(out)
	limit := q.Limit
	if limit <= 0 {
		limit = 10
	}
	from := min(q.Offset, total)
	return out[from:min(from+limit, total)], total, nil
}

func (s *Server) searchThreads(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	if err := q.check(); err != nil {
		writeError(w, r, err)
		return
	}
	page, total, err := s.search(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	if next := q.Offset + len(page); next < total {
		w.Header().Set("X-Pagination-Next", strconv.Itoa(next))
	}
	w.Header().Set("X-Pagination-Total", strconv.Itoa(total))
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) countThreads(w http.ResponseWriter, r *http.Request) {
	var q threadQuery
	if err := s.decodeBody(w, r, &q); err != nil {
		writeError(w, r, err)
		return
	}
	if err := q.check(); err != nil {
		writeError(w, r, err)
		return
	}
	q.Offset, q.Limit = 0, 1
	_, total, err := s.search(r.Context(), q)
	if err != nil {
		writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, total)
}
