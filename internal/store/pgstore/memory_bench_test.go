package pgstore_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// benchDims is the length of the benchmarks' vectors: a small embedding
// model's (all-MiniLM-L6-v2 has 384).
const benchDims = 384

// seedMemory fills the table with n items of one tenant, spread over 100
// users' namespaces ["memories", "u<i%100>"], each with a sentence on one
// of eight topics and a random unit vector, by COPY.
func seedMemory(b *testing.B, dsn string, n int) {
	b.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer conn.Close(ctx)
	topics := []string{"colour", "city", "food", "music", "travel", "work", "family", "sport"}
	r, now := rand.New(rand.NewPCG(3, 4)), time.Now()
	rows := make([][]any, n)
	for i := range rows {
		text := fmt.Sprintf("item %d about %s with %x", i, topics[i%8], r.Uint64())
		value, _ := json.Marshal(map[string]any{"fact": text, "n": i})
		rows[i] = []any{"default", []string{"memories", "u" + strconv.Itoa(i%100)}, "k" + strconv.Itoa(i),
			value, text, vectorBytes(randomUnit(r)), now, now.Add(-time.Duration(i) * time.Second)}
	}
	_, err = conn.CopyFrom(ctx, pgx.Identifier{"memory_items"},
		[]string{"tenant", "namespace", "key", "value", "text", "embedding", "created_at", "updated_at"}, pgx.CopyFromRows(rows))
	if err != nil {
		b.Fatalf("seed %d items: %v", n, err)
	}
	// VACUUM too, so that the first search does not pay for setting the
	// new rows' hint bits while the next ones do not.
	if _, err := conn.Exec(ctx, `VACUUM ANALYZE memory_items`); err != nil {
		b.Fatal(err)
	}
}

// vectorBytes is v as pgstore stores it.
func vectorBytes(v []float32) []byte {
	out := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(x))
	}
	return out
}

func randomUnit(r *rand.Rand) []float32 {
	v := make([]float32, benchDims)
	var sum float64
	for i := range v {
		v[i] = float32(r.Float64() - 0.5)
		sum += float64(v[i]) * float64(v[i])
	}
	norm := float32(math.Sqrt(sum))
	for i := range v {
		v[i] /= norm
	}
	return v
}

// BenchmarkMemory measures a put and the searches the memory tools and
// the faces make, at 10k and 100k items: the whole tenant and one user's
// namespace (1% of the items), without a query (newest first), by text
// (full-text search) and by vector; limit 10. Each size runs on both
// paths of vector search: ranked in the server ("server", the database
// without the vector column) and by the vector extension ("pgvector",
// skipped where the database has none).
func BenchmarkMemory(b *testing.B) {
	for _, n := range []int{10_000, 100_000} {
		for _, path := range []struct {
			name string
			opts []pgstore.Option
		}{{"server", []pgstore.Option{pgstore.WithoutVectorExtension()}}, {"pgvector", nil}} {
			b.Run(strconv.Itoa(n/1000)+"k/"+path.name, func(b *testing.B) {
				// A new database each time: a recycled one may hold the
				// vector column another store added.
				dsn := pgtest.EmptyDSN(b)
				s := openDSN(b, dsn, path.opts...)
				if inSQL, why := s.VectorSearch(); path.opts == nil && !inSQL {
					b.Skipf("SKIPPING the pgvector path: %s", why)
				}
				seedMemory(b, dsn, n)
				benchMemoryOps(b, s)
			})
		}
	}
}

func benchMemoryOps(b *testing.B, s store.Memory) {
	ctx, r := context.Background(), rand.New(rand.NewPCG(1, 2))
	b.Run("Put", func(b *testing.B) {
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			i++
			rec := store.MemoryRecord{
				Item: run.MemoryItem{Namespace: []string{"memories", "bench"}, Key: fmt.Sprintf("p%d", i), Value: map[string]any{"fact": "a new fact about music"}},
				Text: "a new fact about music", Vector: randomUnit(r),
			}
			if _, err := s.PutMemory(ctx, rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	for _, scope := range []struct {
		name   string
		prefix []string
	}{{"Tenant", []string{"memories"}}, {"User", []string{"memories", "u7"}}} {
		for _, q := range []struct {
			name string
			q    func() store.MemoryQuery
		}{
			{"List", func() store.MemoryQuery {
				return store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: scope.prefix}}
			}},
			{"Text", func() store.MemoryQuery {
				return store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: scope.prefix, Query: "favourite music"}}
			}},
			{"Vector", func() store.MemoryQuery {
				return store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: scope.prefix}, Vector: randomUnit(r)}
			}},
		} {
			b.Run("Search"+q.name+"/"+scope.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					page, err := s.SearchMemory(ctx, q.q())
					if err != nil || len(page) != 10 {
						b.Fatalf("search: %d items, %v", len(page), err)
					}
				}
			})
		}
	}
}
