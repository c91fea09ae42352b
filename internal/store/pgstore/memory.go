package pgstore

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/errdefs"
	"agentd/internal/run"
	"agentd/internal/store"
)

var _ store.Memory = (*Store)(nil)

// memoryColumns are what scanMemory reads, in order.
const memoryColumns = `namespace, key, value, created_at, updated_at, ttl_ms, expires_at`

// live is the condition of an item not expired at $now (the parameter
// named by the caller).
func liveAt(param string) string {
	return `(expires_at IS NULL OR expires_at > ` + param + `)`
}

// sweepExpired deletes up to 100 expired items of the put's tenant (but
// the item being put, which the put replaces): every put clears some, so
// expired rows do not pile up while a tenant writes.
const sweepExpired = `DELETE FROM memory_items WHERE ctid = ANY (ARRAY(
    SELECT ctid FROM memory_items
    WHERE tenant = $1 AND expires_at <= $9 AND NOT (namespace = $2 AND key = $3) LIMIT 100))`

// PutMemory upserts the item; a live item keeps its created_at. The same
// statement sweeps expired items (sweepExpired).
func (s *Store) PutMemory(ctx context.Context, rec store.MemoryRecord) (run.MemoryItem, error) {
	it := rec.Item
	value, err := json.Marshal(it.Value)
	if err != nil {
		return run.MemoryItem{}, errdefs.Validationf("pgstore: put memory %q: value: %v", it.Key, err)
	}
	at := s.now()
	var ttl *int64
	var expires *time.Time
	if it.TTL > 0 {
		ms, e := it.TTL.Milliseconds(), at.Add(it.TTL)
		ttl, expires = &ms, &e
	}
	var out run.MemoryItem
	err = s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanMemory(s.pool.QueryRow(ctx, `
WITH swept AS (`+sweepExpired+`)
INSERT INTO memory_items AS m (tenant, namespace, key, value, text, embedding, ttl_ms, expires_at, created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9)
ON CONFLICT (tenant, namespace, key) DO UPDATE SET
    value = EXCLUDED.value, text = EXCLUDED.text, embedding = EXCLUDED.embedding,
    ttl_ms = EXCLUDED.ttl_ms, expires_at = EXCLUDED.expires_at, updated_at = EXCLUDED.updated_at,
    created_at = CASE WHEN m.expires_at IS NULL OR m.expires_at > EXCLUDED.updated_at
                      THEN m.created_at ELSE EXCLUDED.created_at END
RETURNING `+memoryColumns,
			run.TenantFrom(ctx), it.Namespace, it.Key, value, rec.Text, vectorParam(rec.Vector), ttl, expires, at), false)
		return err
	})
	return out, s.classify(fmt.Sprintf("put memory %q", it.Key), err)
}

// GetMemory returns the live item; with refresh, in the statement that
// restarts its TTL.
func (s *Store) GetMemory(ctx context.Context, namespace []string, key string, refresh bool) (run.MemoryItem, error) {
	query := `SELECT ` + memoryColumns + ` FROM memory_items WHERE tenant = $1 AND namespace = $2 AND key = $3 AND ` + liveAt("$4")
	if refresh {
		query = `
UPDATE memory_items SET expires_at = CASE WHEN ttl_ms IS NULL THEN NULL ELSE $4 + ttl_ms * interval '1 millisecond' END
WHERE tenant = $1 AND namespace = $2 AND key = $3 AND ` + liveAt("$4") + ` RETURNING ` + memoryColumns
	}
	var out run.MemoryItem
	err := s.retry(ctx, func(ctx context.Context) error {
		var err error
		out, err = scanMemory(s.pool.QueryRow(ctx, query, run.TenantFrom(ctx), namespace, key, s.now()), false)
		return err
	})
	if errNoRows(err) {
		return run.MemoryItem{}, errdefs.NotFoundf("memory item %q not found in namespace %q", key, namespace)
	}
	return out, s.classify(fmt.Sprintf("get memory %q", key), err)
}

// DeleteMemory deletes the live item.
func (s *Store) DeleteMemory(ctx context.Context, namespace []string, key string) error {
	var n int64
	err := s.retry(ctx, func(ctx context.Context) error {
		tag, err := s.pool.Exec(ctx, `
DELETE FROM memory_items WHERE tenant = $1 AND namespace = $2 AND key = $3 AND `+liveAt("$4"),
			run.TenantFrom(ctx), namespace, key, s.now())
		n = tag.RowsAffected()
		return err
	})
	if err == nil && n == 0 {
		return errdefs.NotFoundf("memory item %q not found in namespace %q", key, namespace)
	}
	return s.classify(fmt.Sprintf("delete memory %q", key), err)
}

// ListMemoryNamespaces lists the namespaces of live items, cut at
// MaxDepth, in label order (bytewise, as the embedded store sorts).
func (s *Store) ListMemoryNamespaces(ctx context.Context, q run.NamespaceQuery) ([][]string, error) {
	var out [][]string
	err := s.retry(ctx, func(ctx context.Context) error {
		out = nil
		rows, err := s.pool.Query(ctx, `
SELECT ns FROM (
    SELECT DISTINCT CASE WHEN $3 > 0 AND cardinality(namespace) > $3 THEN namespace[1:$3] ELSE namespace END AS ns
    FROM memory_items
    WHERE tenant = $1 AND `+liveAt("$2")+` AND `+prefixCond("$4", q.Prefix)+` AND `+suffixCond("$5")+`) n
ORDER BY ns COLLATE "C" OFFSET $6 LIMIT $7`, customPlan,
			run.TenantFrom(ctx), s.now(), q.MaxDepth, labels(q.Prefix), labels(q.Suffix), max(q.Offset, 0), q.PageLimit())
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[[]string])
		return err
	})
	return out, s.classify("list memory namespaces", err)
}

// customPlan makes a search planned for its own parameters each time: a
// cached generic plan cannot tell a prefix that selects every item (the
// index on updated_at is then best) from one that selects a user's few
// (the namespace index), and chose the latter for both — 25 times slower
// for the former.
const customPlan = pgx.QueryExecModeDescribeExec

// prefixCond is true of the namespaces that start with prefix, the labels
// param: those holding its labels (the GIN index finds them), then
// checked in place.
func prefixCond(param string, prefix []string) string {
	if len(prefix) == 0 {
		return `(` + param + `::text[] IS NOT NULL)` // every parameter has a type
	}
	p := param + `::text[]`
	return `(namespace @> ` + p + ` AND namespace[1:cardinality(` + p + `)] = ` + p + `)`
}

// filterCond is true of the values that contain the filter param (JSON
// containment), true of all without a filter.
func filterCond(param string, filter map[string]any) string {
	if len(filter) == 0 {
		return `(` + param + `::jsonb IS NOT NULL)` // every parameter has a type
	}
	return `value @> ` + param + `::jsonb`
}

// suffixCond is true of the namespaces that end with the labels param.
func suffixCond(param string) string {
	p := param + `::text[]`
	return `(cardinality(` + p + `) = 0 OR (cardinality(namespace) >= cardinality(` + p + `) AND
 namespace[cardinality(namespace) - cardinality(` + p + `) + 1:cardinality(namespace)] = ` + p + `))`
}

// labels is a namespace as a query parameter: an empty array, not NULL,
// when empty.
func labels(ns []string) []string {
	if ns == nil {
		return []string{}
	}
	return ns
}

// vectorParam is v as stored: its float32s little-endian, NULL when nil.
func vectorParam(v []float32) any {
	if v == nil {
		return nil
	}
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// scanMemory reads memoryColumns, then the item's (nullable) score when
// scored.
func scanMemory(row pgx.Row, scored bool) (run.MemoryItem, error) {
	var (
		it      run.MemoryItem
		value   []byte
		ttl     *int64
		expires *time.Time
	)
	dest := []any{&it.Namespace, &it.Key, &value, &it.CreatedAt, &it.UpdatedAt, &ttl, &expires}
	if scored {
		dest = append(dest, &it.Score)
	}
	if err := row.Scan(dest...); err != nil {
		return run.MemoryItem{}, err
	}
	if err := json.Unmarshal(value, &it.Value); err != nil {
		return run.MemoryItem{}, err
	}
	it.CreatedAt, it.UpdatedAt = store.StoredTime(it.CreatedAt), store.StoredTime(it.UpdatedAt)
	if ttl != nil {
		it.TTL = time.Duration(*ttl) * time.Millisecond
	}
	if expires != nil {
		it.ExpiresAt = store.StoredTime(*expires)
	}
	return it, nil
}
