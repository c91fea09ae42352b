package pgstore

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"unicode"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

// vectorProbe remembers whether the database has the vector extension
// (pgvector): when it does, a vector search ranks with its cosine distance
// operator over the same real[] column, cast; otherwise with memory_dot
// (migration 00014), in plain SQL. A failed probe is tried again later.
type vectorProbe struct {
	mu      sync.Mutex
	known   bool
	present bool
}

// hasVector reports whether the vector extension is installed.
func (s *Store) hasVector(ctx context.Context) (bool, error) {
	p := &s.vector
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.known {
		return p.present, nil
	}
	err := s.retry(ctx, func(ctx context.Context) error {
		return s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')`).Scan(&p.present)
	})
	if err != nil {
		return false, s.classify("probe the vector extension", err)
	}
	p.known = true
	return p.present, nil
}

// SearchMemory returns one page of the matching items, in the order
// store.MemoryQuery describes; with RefreshTTL the same statement restarts
// the TTL of the items it returns.
func (s *Store) SearchMemory(ctx context.Context, q store.MemoryQuery) ([]run.MemoryItem, error) {
	filter := []byte("{}")
	if q.Filter != nil {
		var err error
		if filter, err = json.Marshal(q.Filter); err != nil {
			return nil, errdefs.Validationf("pgstore: search memory: filter: %v", err)
		}
	}
	args := []any{run.TenantFrom(ctx), s.now(), labels(q.Prefix), filter, max(q.Offset, 0), q.PageLimit()}
	score, order, cond := `NULL::double precision`, `updated_at DESC, namespace COLLATE "C", key COLLATE "C"`, ``
	switch {
	case q.Vector != nil:
		pgvector, err := s.hasVector(ctx)
		if err != nil {
			return nil, err
		}
		args = append(args, q.Vector)
		score = `memory_dot(embedding, $7)`
		if pgvector {
			score = `1 - (embedding::vector <=> $7::vector)`
		}
		cond = ` AND cardinality(embedding) = cardinality($7::real[])`
	case len(textTerms(q.Query)) > 0:
		// Any of the words, ranked by how well the text matches them.
		args = append(args, strings.Join(textTerms(q.Query), " or "))
		score = `ts_rank(tsv, websearch_to_tsquery('english', $7))`
		cond = ` AND tsv @@ websearch_to_tsquery('english', $7)`
	}
	if score != `NULL::double precision` {
		order = score + ` DESC, namespace COLLATE "C", key COLLATE "C"`
	}
	hits := `SELECT ` + memoryColumns + `, ` + score + ` AS score, row_number() OVER (ORDER BY ` + order + `) AS rn
FROM memory_items
WHERE tenant = $1 AND ` + liveAt("$2") + ` AND ` + prefixCond("$3") + ` AND value @> $4::jsonb` + cond + `
ORDER BY ` + order + ` OFFSET $5 LIMIT $6`
	query := `SELECT ` + memoryColumns + `, score FROM (` + hits + `) h ORDER BY rn`
	if q.RefreshTTL {
		query = `WITH hits AS (` + hits + `),
refreshed AS (
    UPDATE memory_items m SET expires_at = $2 + m.ttl_ms * interval '1 millisecond'
    FROM hits h WHERE m.tenant = $1 AND m.namespace = h.namespace AND m.key = h.key AND m.ttl_ms IS NOT NULL
    RETURNING m.namespace, m.key, m.expires_at)
SELECT h.namespace, h.key, h.value, h.created_at, h.updated_at, h.ttl_ms, coalesce(r.expires_at, h.expires_at), h.score
FROM hits h LEFT JOIN refreshed r ON r.namespace = h.namespace AND r.key = h.key ORDER BY h.rn`
	}
	var out []run.MemoryItem
	err := s.retry(ctx, func(ctx context.Context) error {
		out = nil
		rows, err := s.pool.Query(ctx, query, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			it, err := scanMemory(rows, true)
			if err != nil {
				return err
			}
			out = append(out, it)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.classify("search memory", err)
	}
	return out, nil
}

// textTerms are the words of a text query (runs of letters and digits),
// so that websearch_to_tsquery sees no operator the user did not mean.
func textTerms(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
