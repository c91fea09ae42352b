package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Where PostgreSQL's vector extension (pgvector) is available, a vector
// search is ranked in SQL by its cosine distance (<=>); elsewhere, or with
// WithoutVectorExtension, in the server (memoryvector.go). Both answer the
// same query with the same items in the same order; the scores differ by
// pgvector's float32 sums (1e-7 to 1e-6), so only items that close may
// come in another order — exact ties (the same vector) do not.
//
// The vectors pgvector ranks are a column derived from the stored bytes,
// which stay the one thing written:
//
//	embedding_vector vector GENERATED ALWAYS AS (agentd_embedding_vector(embedding)) STORED
//
// A migration cannot add it — the extension may be missing, and goose
// applies every migration or fails — so Open adds it when the extension
// is available, once per database, under the migrations' advisory lock.
// A generated column, rather than one the store writes beside the bytes,
// because the database then keeps the two in step whoever writes: a
// replica that opened before the column existed, one told not to use the
// extension, an older agentd. It costs a put the conversion in PL/pgSQL
// (about 0.15 ms for 384 dimensions, docs/benchmarks.md); a TTL refresh
// does not touch the bytes and converts nothing. Adding the column
// converts every stored vector while it holds the table (ACCESS
// EXCLUSIVE): memory operations wait for that, once. DROP EXTENSION
// vector CASCADE removes the function and the column; a search then
// finds them missing and is answered by the fallback.
//
// The conversion gives NULL for what pgvector cannot hold: bytes that are
// not whole float32s, more than vectorMaxDims of them, a non-finite
// element (the contract's vectors have unit length, so none has one). A
// query vector of more than vectorMaxDims is ranked in the server, which
// finds the items of its length as it always did.
//
// There is no approximate (HNSW, IVFFlat) index: it would answer
// differently from the fallback (approximately, and filtering after the
// index scan, so a user's prefix could come back short of its limit), and
// pgvector indexes a column of one dimension only while this one holds
// every model's vectors. The ranking is exact, a pass over the
// candidates in C.

// vectorMaxDims is the most dimensions pgvector's vector holds.
const vectorMaxDims = 16000

// vectorSetupSQL adds the column; each statement is run in order in one
// transaction.
var vectorSetupSQL = []string{
	`CREATE EXTENSION IF NOT EXISTS vector`,
	// float32 little-endian bytes to a vector, bit by bit: SQL has no
	// cast from bytes to floats. Exact (every float32 is a float8 product
	// of its mantissa and a power of two); NULL where pgvector would refuse.
	`CREATE OR REPLACE FUNCTION agentd_embedding_vector(b bytea) RETURNS vector
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE AS $$
DECLARE
    n int := length(b) / 4;
    v real[];
    bits int;
    e int;
BEGIN
    IF length(b) % 4 <> 0 OR n < 1 OR n > ` + fmt.Sprint(vectorMaxDims) + ` THEN
        RETURN NULL;
    END IF;
    v := array_fill(0::real, ARRAY[n]);
    FOR i IN 0 .. n - 1 LOOP
        bits := get_byte(b, 4*i) | (get_byte(b, 4*i+1) << 8) | (get_byte(b, 4*i+2) << 16) | (get_byte(b, 4*i+3) << 24);
        e := (bits >> 23) & 255;
        IF e = 255 THEN
            RETURN NULL; -- infinite or NaN
        END IF;
        v[i+1] := (1 - 2 * ((bits >> 31) & 1)) * ((bits & 8388607) + CASE WHEN e = 0 THEN 0 ELSE 8388608 END)
                  * 2::float8 ^ (greatest(e, 1) - 150);
    END LOOP;
    RETURN v::vector;
END
$$`,
	// The vector is kept in the row (MAIN, and rows of up to 8160 bytes
	// before anything is moved out): read out of line (TOAST), as it was
	// by default, a search of 100k items of 384 dimensions took four times
	// as long. Where a row is longer still, the bytes go out first. (The
	// default target would move the bytes out at 384 dimensions, faster
	// still, but the vector too from about 420 up: three times slower at
	// 768; docs/benchmarks.md.) One statement, so that the rewrite that
	// fills the column lays the rows out so.
	`ALTER TABLE memory_items SET (toast_tuple_target = 8160),
    ADD COLUMN IF NOT EXISTS embedding_vector vector GENERATED ALWAYS AS (agentd_embedding_vector(embedding)) STORED,
    ALTER COLUMN embedding_vector SET STORAGE MAIN`,
}

// vectorSupport records which path vector searches take, and why.
type vectorSupport struct {
	inSQL bool
	why   string
}

// WithoutVectorExtension ranks vector searches in the server even where
// the vector extension is available, and leaves the database as it is
// (no extension created, no column added). A column another store added
// stays in step with the bytes all the same.
func WithoutVectorExtension() Option {
	return func(c *config) { c.noVectorExtension = true }
}

// VectorSearch tells where vector searches are ranked — in SQL by pgvector
// (true) or in the server — and why, for the operator's log.
func (s *Store) VectorSearch() (inSQL bool, why string) {
	return s.vector.inSQL, s.vector.why
}

// setUpVector finds or adds the vector column. Anything that stands in
// the way (no extension, no right to create it) leaves the fallback, with
// the reason: the extension is an optimisation, never a requirement.
func setUpVector(ctx context.Context, pool *pgxpool.Pool, cfg config) vectorSupport {
	if cfg.noVectorExtension {
		return vectorSupport{why: "turned off (WithoutVectorExtension)"}
	}
	available, ready, err := vectorState(ctx, pool)
	switch {
	case err != nil:
		return vectorSupport{why: fmt.Sprintf("looking for the vector extension: %v", err)}
	case ready:
		return vectorSupport{inSQL: true, why: "the vector extension is installed and memory_items.embedding_vector exists"}
	case !available:
		return vectorSupport{why: "the database has no vector extension (pg_available_extensions)"}
	}
	err = pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		// Replicas opening together add the column once; the lock is the
		// migrations', so it also waits for a migration in progress.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, migrationLockID); err != nil {
			return err
		}
		for _, stmt := range vectorSetupSQL {
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return vectorSupport{why: fmt.Sprintf("adding memory_items.embedding_vector: %v", err)}
	}
	return vectorSupport{inSQL: true, why: "the vector extension is available; memory_items.embedding_vector added"}
}

// vectorState tells whether the database offers the vector extension and
// whether the column exists already (then the extension is installed).
func vectorState(ctx context.Context, pool *pgxpool.Pool) (available, ready bool, err error) {
	err = pool.QueryRow(ctx, `
SELECT EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector'),
       EXISTS (SELECT FROM pg_attribute
               WHERE attrelid = 'memory_items'::regclass AND attname = 'embedding_vector' AND NOT attisdropped)`).
		Scan(&available, &ready)
	return available, ready, err
}

// vectorColumnGone tells whether err says the column, its type or its
// operator is missing: the extension was dropped while the store was open.
func vectorColumnGone(err error) bool {
	var pe *pgconn.PgError
	// undefined_column, undefined_object (the type), undefined_function
	// (the operator)
	return errors.As(err, &pe) && (pe.Code == "42703" || pe.Code == "42704" || pe.Code == "42883")
}

// rankInSQL tells whether pgvector can rank by v: one it can hold.
func (s *Store) rankInSQL(v []float32) bool {
	if !s.vector.inSQL || len(v) < 1 || len(v) > vectorMaxDims {
		return false
	}
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}
