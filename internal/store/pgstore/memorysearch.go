package pgstore

import (
	"context"
	"encoding/json"
	"strings"
	"unicode"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

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
	if q.Vector != nil && !s.rankInSQL(q.Vector) {
		return s.searchVectorInServer(ctx, q, filter) // memoryvector.go
	}
	query, args := searchStatement(q, []any{run.TenantFrom(ctx), s.now(), labels(q.Prefix), filter, max(q.Offset, 0), q.PageLimit()})
	var out []run.MemoryItem
	err := s.retry(ctx, func(ctx context.Context) error {
		out = nil
		rows, err := s.pool.Query(ctx, query, append([]any{customPlan}, args...)...)
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
	switch {
	case err != nil && q.Vector != nil && vectorColumnGone(err):
		return s.searchVectorInServer(ctx, q, filter) // the extension was dropped since Open
	case err != nil:
		return nil, s.classify("search memory", err)
	}
	return out, nil
}

// searchStatement is the statement of a search ranked in SQL, and its
// parameters: args ($1 to $6: tenant, now, prefix, filter, offset, limit)
// and the query's.
func searchStatement(q store.MemoryQuery, args []any) (string, []any) {
	score, order, cond := `NULL::double precision`, `updated_at DESC, namespace COLLATE "C", key COLLATE "C"`, ``
	switch {
	case q.Vector != nil:
		// pgvector's cosine distance, over the vectors of the query's
		// length (memoryextension.go); the length is the bytes', which
		// PostgreSQL knows without reading them.
		args = append(args, q.Vector, 4*len(q.Vector))
		score = `1 - (embedding_vector <=> $7::real[]::vector)`
		cond = ` AND embedding_vector IS NOT NULL AND octet_length(embedding) = $8`
	case len(textTerms(q.Query)) > 0:
		// Any of the words, ranked by how well the text matches them.
		args = append(args, strings.Join(textTerms(q.Query), " or "))
		score = `ts_rank(tsv, websearch_to_tsquery('english', $7))`
		cond = ` AND tsv @@ websearch_to_tsquery('english', $7)`
	}
	if score != `NULL::double precision` {
		order = `score DESC, namespace COLLATE "C", key COLLATE "C"`
	}
	// The score is computed once per match (the subquery), the page cut
	// by a top-N sort, and only the page's rows ordered again.
	hits := `SELECT * FROM (
    SELECT ` + memoryColumns + `, ` + score + ` AS score FROM memory_items
    WHERE tenant = $1 AND ` + liveAt("$2") + ` AND ` + prefixCond("$3", q.Prefix) + ` AND ` + filterCond("$4", q.Filter) + cond + `) m
ORDER BY ` + order + ` OFFSET $5 LIMIT $6`
	if !q.RefreshTTL {
		return hits, args
	}
	return `WITH hits AS (` + hits + `),
refreshed AS (
    UPDATE memory_items m SET expires_at = $2 + m.ttl_ms * interval '1 millisecond'
    FROM hits h WHERE m.tenant = $1 AND m.namespace = h.namespace AND m.key = h.key AND m.ttl_ms IS NOT NULL
    RETURNING m.namespace AS r_namespace, m.key AS r_key, m.expires_at AS r_expires_at)
SELECT namespace, key, value, created_at, updated_at, ttl_ms, coalesce(r_expires_at, expires_at), score
FROM hits LEFT JOIN refreshed ON r_namespace = namespace AND r_key = key ORDER BY ` + order, args
}

// textTerms are the words of a text query (runs of letters and digits),
// so that websearch_to_tsquery sees no operator the user did not mean.
func textTerms(query string) []string {
	return strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
}
