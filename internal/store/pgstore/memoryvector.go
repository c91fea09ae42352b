package pgstore

import (
	"cmp"
	"context"
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"

	"github.com/jackc/pgx/v5"

	"agentd/internal/run"
	"agentd/internal/store"
)

// Without the vector extension (memoryextension.go) a vector search ranks
// in the server: one statement streams the candidates' vectors (bytes,
// sent as stored), the server keeps the best offset+limit by dot product
// (both vectors have unit length: the cosine similarity), and a second
// statement reads those items — refreshing their TTL when asked. Ranking
// in plain SQL over real[] columns (a function over unnest, or sending
// real[] to the server) cost about half a millisecond, then a tenth, per
// 384-dimension row on the development machine, the sending of each
// element being the cost (docs/memory.md). This path needs nothing of
// the database and is what runs wherever the extension is missing.

// vectorHit is a candidate and its score.
type vectorHit struct {
	namespace []string
	key       string
	score     float64
}

// searchVectorInServer answers a vector query as described above.
func (s *Store) searchVectorInServer(ctx context.Context, q store.MemoryQuery, filter []byte) ([]run.MemoryItem, error) {
	keep := max(q.Offset, 0) + q.PageLimit()
	var hits []vectorHit
	err := s.retry(ctx, func(ctx context.Context) error {
		hits = hits[:0]
		rows, err := s.pool.Query(ctx, `
SELECT namespace, key, embedding FROM memory_items
WHERE tenant = $1 AND `+liveAt("$2")+` AND `+prefixCond("$3", q.Prefix)+` AND `+filterCond("$4", q.Filter)+` AND embedding IS NOT NULL`, customPlan,
			run.TenantFrom(ctx), s.now(), labels(q.Prefix), filter)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var h vectorHit
			var raw []byte
			if err := rows.Scan(&h.namespace, &h.key, &raw); err != nil {
				return err
			}
			if len(raw) != 4*len(q.Vector) {
				continue // another model's vector: not comparable
			}
			h.score = dot(raw, q.Vector)
			hits = keepBest(hits, h, keep)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, s.classify("search memory by vector", err)
	}
	hits = hits[min(max(q.Offset, 0), len(hits)):]
	return s.readHits(ctx, hits, q.RefreshTTL)
}

// better orders hits: score descending, then namespace and key bytewise.
func better(a, b vectorHit) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	if c := slices.Compare(a.namespace, b.namespace); c != 0 {
		return c
	}
	return cmp.Compare(a.key, b.key)
}

// keepBest inserts h into the sorted hits, keeping at most n.
func keepBest(hits []vectorHit, h vectorHit, n int) []vectorHit {
	if len(hits) == n && better(h, hits[n-1]) >= 0 {
		return hits
	}
	i, _ := slices.BinarySearchFunc(hits, h, better)
	hits = slices.Insert(hits, i, h)
	return hits[:min(len(hits), n)]
}

// dot is the dot product of q and a stored vector of its length
// (float32s, little-endian).
func dot(raw []byte, q []float32) float64 {
	var sum float64
	for i := range q {
		sum += float64(math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))) * float64(q[i])
	}
	return sum
}

// readHits reads the items of hits, in their order with their scores; an
// item deleted since it was ranked is left out. With refresh, the read
// restarts their TTL.
func (s *Store) readHits(ctx context.Context, hits []vectorHit, refresh bool) ([]run.MemoryItem, error) {
	if len(hits) == 0 {
		return []run.MemoryItem{}, nil
	}
	nss, keys := make([]string, len(hits)), make([]string, len(hits))
	for i, h := range hits {
		b, _ := json.Marshal(h.namespace) // a []string always encodes
		nss[i], keys[i] = string(b), h.key
	}
	set := `expires_at`
	if refresh {
		set = `CASE WHEN ttl_ms IS NULL THEN expires_at ELSE $2 + ttl_ms * interval '1 millisecond' END`
	}
	// An UPDATE either way, so that one statement serves both; without a
	// refresh it writes each row's expiry unchanged.
	query := `
UPDATE memory_items m SET expires_at = ` + set + `
FROM unnest($3::text[], $4::text[]) AS h(h_ns, h_key)
WHERE m.tenant = $1 AND m.key = h_key AND m.namespace = ARRAY(SELECT jsonb_array_elements_text(h_ns::jsonb))
  AND ` + liveAt("$2") + `
RETURNING ` + memoryColumns
	if !refresh {
		query = `
SELECT ` + memoryColumns + ` FROM memory_items m JOIN unnest($3::text[], $4::text[]) AS h(h_ns, h_key)
  ON m.tenant = $1 AND m.key = h_key AND m.namespace = ARRAY(SELECT jsonb_array_elements_text(h_ns::jsonb))
WHERE ` + liveAt("$2")
	}
	found := map[string]run.MemoryItem{}
	err := s.retry(ctx, func(ctx context.Context) error {
		rows, err := s.pool.Query(ctx, query, run.TenantFrom(ctx), s.now(), nss, keys)
		if err != nil {
			return err
		}
		items, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (run.MemoryItem, error) { return scanMemory(r, false) })
		for _, it := range items {
			b, _ := json.Marshal(it.Namespace)
			found[string(b)+"\x00"+it.Key] = it
		}
		return err
	})
	if err != nil {
		return nil, s.classify("read memory hits", err)
	}
	out := make([]run.MemoryItem, 0, len(hits))
	for i, h := range hits {
		if it, ok := found[nss[i]+"\x00"+h.key]; ok {
			it.Score = &hits[i].score
			out = append(out, it)
		}
	}
	return out, nil
}
