package pgstore_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/pgstore"
)

// openInSQL opens a store on dsn that ranks vectors with the vector
// extension, or skips t naming why it cannot.
func openInSQL(t *testing.T, dsn string, opts ...pgstore.Option) *pgstore.Store {
	t.Helper()
	s := openDSN(t, dsn, opts...)
	if inSQL, why := s.VectorSearch(); !inSQL {
		t.Skipf("SKIPPING: the vector extension cannot be used here: %s (the fallback is tested by TestMemoryContractInServer)", why)
	}
	return s
}

// testClock is a clock two stores share, moved by the test.
type testClock struct{ ns atomic.Int64 }

func newTestClock() *testClock {
	c := &testClock{}
	c.ns.Store(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	return c
}

func (c *testClock) now() time.Time          { return time.Unix(0, c.ns.Load()).UTC() }
func (c *testClock) advance(d time.Duration) { c.ns.Add(int64(d)) }

// cosineCounter counts the statements that rank by pgvector's cosine
// distance: which path a store took.
type cosineCounter struct{ n atomic.Int64 }

func (c *cosineCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "<=>") {
		c.n.Add(1)
	}
	return ctx
}
func (c *cosineCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestMemoryVectorPathsAgree: the same vector queries over the same items
// get the same answers ranked by pgvector in SQL and in the server —
// items, order (ties by namespace and key, bytewise), scores to pgvector's
// float32 precision, and the TTL a refresh sets. Half the items are
// written by the store that does not use the extension: the derived column
// follows the bytes whoever writes them.
func TestMemoryVectorPathsAgree(t *testing.T) {
	dsn, clock := pgtest.DSN(t), newTestClock()
	var sqlRanks, serverRanks cosineCounter
	inSQL := openInSQL(t, dsn, pgstore.WithClock(clock.now), pgstore.WithTracer(&sqlRanks))
	inServer := openDSN(t, dsn, pgstore.WithClock(clock.now), pgstore.WithoutVectorExtension(), pgstore.WithTracer(&serverRanks))
	if on, _ := inServer.VectorSearch(); on {
		t.Fatal("WithoutVectorExtension: the store still ranks in SQL")
	}
	seedBothPaths(t, clock, inSQL, inServer)
	for _, q := range vectorQueries() {
		t.Run(q.name, func(t *testing.T) {
			want, err := inServer.SearchMemory(context.Background(), q.q)
			if err != nil {
				t.Fatalf("in the server: %v", err)
			}
			got, err := inSQL.SearchMemory(context.Background(), q.q)
			if err != nil {
				t.Fatalf("in SQL: %v", err)
			}
			if len(want) != q.n {
				t.Fatalf("in the server: %d items, want %d (the data no longer tests this)", len(want), q.n)
			}
			sameAnswer(t, got, want)
		})
	}
	if sqlRanks.n.Load() == 0 || serverRanks.n.Load() != 0 {
		t.Fatalf("statements ranking by <=>: %d in SQL, %d in the server; want some, none", sqlRanks.n.Load(), serverRanks.n.Load())
	}
	t.Run("refresh", func(t *testing.T) {
		clock.advance(10 * time.Minute)
		q := store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: []string{"m"}, Limit: 7, RefreshTTL: true}, Vector: circle(0.1)}
		got, err := inSQL.SearchMemory(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want, err := inServer.SearchMemory(context.Background(), q) // the same expiries again: the clock stood still
		if err != nil {
			t.Fatal(err)
		}
		sameAnswer(t, got, want)
		for _, it := range got {
			if it.TTL > 0 && !it.ExpiresAt.Equal(clock.now().Add(it.TTL)) {
				t.Fatalf("%v/%s: expires %v, want the refresh's %v", it.Namespace, it.Key, it.ExpiresAt, clock.now().Add(it.TTL))
			}
		}
	})
}

// seedBothPaths puts the items the queries rank: directions on a circle,
// each under four names (exact ties: the same float32s; the queries'
// angles are chosen so that no two directions score alike, as pgvector,
// which divides by the norms, may not rank alike what ties in float64), some with a TTL, some expired, with
// values to filter on; vectors of another length; items without a
// vector; random 384-dimension vectors under ["r"].
func seedBothPaths(t *testing.T, clock *testClock, a, b store.Memory) {
	t.Helper()
	ctx := context.Background()
	put := func(s store.Memory, ns []string, key string, ttl time.Duration, value map[string]any, vec []float32) {
		t.Helper()
		rec := store.MemoryRecord{Item: run.MemoryItem{Namespace: ns, Key: key, Value: value, TTL: ttl}, Text: key, Vector: vec}
		if _, err := s.PutMemory(ctx, rec); err != nil {
			t.Fatalf("put %v/%s: %v", ns, key, err)
		}
	}
	// Keys that sort differently bytewise and by a language's collation.
	keys := []string{"a", "B", "é", "z", "Z1", "_"}
	for i := range 60 {
		s, ns := []store.Memory{a, b}[i%2], []string{"m", "u" + strconv.Itoa(i%3)}
		value := map[string]any{"topic": []string{"x", "y"}[i%2], "n": i}
		vec := circle(float64(i%30) * 2 * math.Pi / 30) // i and i+30: the same vector
		put(s, ns, keys[i%len(keys)]+strconv.Itoa(i), time.Duration(i%4)*time.Hour, value, vec)
		put(s, []string{"m"}, keys[(i+1)%len(keys)]+strconv.Itoa(i), 0, value, vec)
	}
	for i := range 5 {
		put(a, []string{"m", "short"}, "s"+strconv.Itoa(i), time.Minute, map[string]any{"topic": "x"}, circle(0.1))
		put(b, []string{"m", "three"}, "t"+strconv.Itoa(i), 0, map[string]any{"topic": "x"}, unit3(float64(i)))
		put(a, []string{"m", "none"}, "n"+strconv.Itoa(i), 0, map[string]any{"topic": "x"}, nil)
	}
	r := rand.New(rand.NewPCG(5, 6))
	for i := range 200 {
		put([]store.Memory{a, b}[i%2], []string{"r"}, "r"+strconv.Itoa(i), 0, map[string]any{}, randomUnit(r))
	}
	clock.advance(2 * time.Minute) // the short items expire
}

// circle is a unit vector of 4 dimensions at angle a in its first plane.
func circle(a float64) []float32 {
	return []float32{float32(math.Cos(a)), float32(math.Sin(a)), 0, 0}
}

// unit3 is a unit vector of 3 dimensions, at angle a.
func unit3(a float64) []float32 {
	return []float32{float32(math.Cos(a)), 0, float32(math.Sin(a))}
}

type vectorQuery struct {
	name string
	q    store.MemoryQuery
	n    int // how many items the answer holds
}

func vectorQueries() []vectorQuery {
	search := func(prefix []string, filter map[string]any, offset, limit int, vec []float32) store.MemoryQuery {
		return store.MemoryQuery{MemorySearch: run.MemorySearch{Prefix: prefix, Filter: filter, Offset: offset, Limit: limit}, Vector: vec}
	}
	return []vectorQuery{
		{"tenant", search(nil, nil, 0, 10, circle(0.1)), 10},
		{"tenant, every item", search(nil, nil, 0, 1000, circle(0.1)), 120},
		{"ties", search([]string{"m"}, nil, 0, 40, circle(0.05)), 40},
		{"prefix", search([]string{"m", "u1"}, nil, 0, 100, circle(2)), 20},
		{"prefix of one label", search([]string{"m"}, nil, 3, 25, circle(-1)), 25},
		{"filter", search([]string{"m"}, map[string]any{"topic": "y"}, 0, 100, circle(0.5)), 60},
		{"filter and offset", search(nil, map[string]any{"topic": "x"}, 55, 10, circle(0.5)), 5},
		{"offset past the end", search([]string{"m"}, nil, 500, 10, circle(0.5)), 0},
		{"another length", search(nil, nil, 0, 10, unit3(0.3)), 5},
		{"no item of its length", search(nil, nil, 0, 10, []float32{1, 0, 0, 0, 0}), 0},
		{"nothing under the prefix", search([]string{"m", "none"}, nil, 0, 10, circle(0.1)), 0},
		{"384 dimensions", search([]string{"r"}, nil, 0, 10, randomUnit(rand.New(rand.NewPCG(7, 8)))), 10},
	}
}

// sameAnswer requires the same items in the same order, equal but for
// the scores, which may differ by pgvector's float32 rounding.
func sameAnswer(t *testing.T, got, want []run.MemoryItem) {
	t.Helper()
	name := func(it run.MemoryItem) string { return fmt.Sprintf("%v/%s", it.Namespace, it.Key) }
	if !slices.EqualFunc(got, want, func(a, b run.MemoryItem) bool { return name(a) == name(b) }) {
		gotNames, wantNames := make([]string, len(got)), make([]string, len(want))
		for i, it := range got {
			gotNames[i] = name(it)
		}
		for i, it := range want {
			wantNames[i] = name(it)
		}
		t.Fatalf("in SQL:\n%v\nin the server:\n%v", gotNames, wantNames)
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Score == nil || w.Score == nil || math.Abs(*g.Score-*w.Score) > 1e-6 {
			t.Fatalf("%s: score %v in SQL, %v in the server", name(g), deref(g.Score), deref(w.Score))
		}
		g.Score, w.Score = nil, nil
		if fmt.Sprint(g) != fmt.Sprint(w) {
			t.Fatalf("%s:\nin SQL        %+v\nin the server %+v", name(g), g, w)
		}
	}
}

func deref(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}

// connectTo is a connection to dsn beside the store's, closed when t ends.
func connectTo(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// TestMemoryVectorColumnIsExact: the conversion gives exactly the float32s
// of the bytes (normal, subnormal, extreme, random bit patterns), and NULL
// where pgvector could not hold the vector.
func TestMemoryVectorColumnIsExact(t *testing.T) {
	dsn, ctx := pgtest.DSN(t), context.Background()
	openInSQL(t, dsn)
	conn := connectTo(t, dsn)
	convert := func(b []byte) []float32 {
		t.Helper()
		var v []float32
		if err := conn.QueryRow(ctx, `SELECT agentd_embedding_vector($1)::real[]`, b).Scan(&v); err != nil {
			t.Fatalf("convert %d bytes: %v", len(b), err)
		}
		return v
	}
	r := rand.New(rand.NewPCG(9, 10))
	special := []float32{1, -1, 0.5, 0, math.SmallestNonzeroFloat32, -math.SmallestNonzeroFloat32,
		math.Float32frombits(0x007fffff), math.Float32frombits(0x00800000), math.MaxFloat32, -math.MaxFloat32}
	for len(special) < 4096 {
		if x := math.Float32frombits(r.Uint32()); !math.IsNaN(float64(x)) && !math.IsInf(float64(x), 0) {
			special = append(special, x)
		}
	}
	if got := convert(vectorBytes(special)); !slices.Equal(got, special) {
		for i := range special {
			if got == nil || got[i] != special[i] {
				t.Fatalf("element %d (bits %#08x): got %v, want %v", i, math.Float32bits(special[i]), got, special[i])
			}
		}
	}
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	for name, b := range map[string][]byte{
		"NaN": vectorBytes([]float32{1, nan}), "infinity": vectorBytes([]float32{-inf, 0}), "no bytes": {},
		"three bytes": {0, 0, 0x80}, "16001 floats": vectorBytes(make([]float32, 16001)),
	} {
		if got := convert(b); got != nil {
			t.Errorf("%s: %d elements, want NULL", name, len(got))
		}
	}
	if got := convert(vectorBytes(make([]float32, 16000))); len(got) != 16000 {
		t.Errorf("16000 floats: %d elements, want all", len(got))
	}
}

// TestMemoryVectorColumnFollowsPuts: the column follows each put of the
// item: a vector, another, none.
func TestMemoryVectorColumnFollowsPuts(t *testing.T) {
	dsn, ctx := pgtest.DSN(t), context.Background()
	s := openInSQL(t, dsn)
	conn := connectTo(t, dsn)
	column := func(vec []float32) []float32 {
		t.Helper()
		rec := store.MemoryRecord{Item: run.MemoryItem{Namespace: []string{"c"}, Key: "k", Value: map[string]any{}}, Vector: vec}
		if _, err := s.PutMemory(ctx, rec); err != nil {
			t.Fatal(err)
		}
		var v []float32
		if err := conn.QueryRow(ctx, `SELECT embedding_vector::real[] FROM memory_items WHERE key = 'k'`).Scan(&v); err != nil {
			t.Fatal(err)
		}
		return v
	}
	for _, vec := range [][]float32{{0.6, 0.8}, {0, 1, 0}, nil} {
		if got := column(vec); !slices.Equal(got, vec) {
			t.Fatalf("after a put of %v the column holds %v", vec, got)
		}
	}
}

// TestOpenWithoutTheRightToCreateTheExtension: a role that may not create
// the extension (pgvector is not a trusted extension: it takes a
// superuser) gets a store that ranks in the server, and says why.
func TestOpenWithoutTheRightToCreateTheExtension(t *testing.T) {
	dsn, ctx := pgtest.EmptyDSN(t), context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { admin.Close(ctx) })
	var available bool
	if err := admin.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector')`).Scan(&available); err != nil {
		t.Fatal(err)
	}
	if !available {
		t.Skip("SKIPPING: the database server has no vector extension to be refused")
	}
	role := pgx.Identifier{"agentd_plain_" + strconv.FormatUint(rand.Uint64(), 36)}.Sanitize()
	if _, err := admin.Exec(ctx, `CREATE ROLE `+role+` LOGIN PASSWORD 'plain'; GRANT CREATE, USAGE ON SCHEMA public TO `+role); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, `DROP OWNED BY `+role+`; DROP ROLE `+role); err != nil {
			t.Errorf("drop the role: %v", err)
		}
	})
	s := openDSN(t, withUser(t, dsn, strings.Trim(role, `"`), "plain"))
	inSQL, why := s.VectorSearch()
	if inSQL || !strings.Contains(why, "permission denied") {
		t.Fatalf("VectorSearch() = %v, %q; want the fallback, because the role may not create the extension", inSQL, why)
	}
	t.Logf("VectorSearch(): %q", why)
	rec := store.MemoryRecord{Item: run.MemoryItem{Namespace: []string{"m"}, Key: "k", Value: map[string]any{}}, Vector: circle(1)}
	if _, err := s.PutMemory(ctx, rec); err != nil {
		t.Fatal(err)
	}
	page, err := s.SearchMemory(ctx, store.MemoryQuery{Vector: circle(1)})
	if err != nil || len(page) != 1 || math.Abs(*page[0].Score-1) > 1e-6 {
		t.Fatalf("search by vector = %v, %v", page, err)
	}
}

// withUser is dsn logging in as user with password.
func withUser(t *testing.T, dsn, user, password string) string {
	t.Helper()
	if !strings.HasPrefix(dsn, "postgres://") && !strings.HasPrefix(dsn, "postgresql://") {
		return dsn + " user=" + user + " password=" + password // the later keyword wins
	}
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(user, password)
	return u.String()
}

// TestMemoryExtensionDroppedWhileOpen: when the extension is dropped
// (CASCADE takes the column) under an open store, its vector searches are
// answered by the fallback.
func TestMemoryExtensionDroppedWhileOpen(t *testing.T) {
	dsn, ctx := pgtest.EmptyDSN(t), context.Background() // a database of its own: it loses the column
	s := openInSQL(t, dsn)
	for i, vec := range [][]float32{circle(0), circle(1), circle(2)} {
		rec := store.MemoryRecord{Item: run.MemoryItem{Namespace: []string{"m"}, Key: strconv.Itoa(i), Value: map[string]any{}}, Vector: vec}
		if _, err := s.PutMemory(ctx, rec); err != nil {
			t.Fatal(err)
		}
	}
	q := store.MemoryQuery{MemorySearch: run.MemorySearch{Limit: 2}, Vector: circle(1.9)}
	before, err := s.SearchMemory(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := connectTo(t, dsn).Exec(ctx, `DROP EXTENSION vector CASCADE`); err != nil {
		t.Fatal(err)
	}
	after, err := s.SearchMemory(ctx, q)
	if err != nil {
		t.Fatalf("search after the extension was dropped: %v", err)
	}
	sameAnswer(t, before, after)
}
