package memory_test

import (
	"context"
	"slices"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/memory"
	"agentd/internal/pgtest"
	"agentd/internal/run"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/pgstore"
)

// stores are the stores the semantic tests run on: memstore, PostgreSQL as
// Open makes it (vectors ranked by the vector extension where the database
// has it) and PostgreSQL ranking in the server; PostgreSQL is skipped
// (loudly) without a database.
func stores(t *testing.T) map[string]func(t *testing.T) store.Memory {
	openPG := func(t *testing.T, opts ...pgstore.Option) store.Memory {
		s, err := pgstore.Open(context.Background(), pgtest.DSN(t), opts...)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { s.Close() })
		return s
	}
	return map[string]func(t *testing.T) store.Memory{
		"memstore":          func(*testing.T) store.Memory { return memstore.New() },
		"pgstore":           func(t *testing.T) store.Memory { return openPG(t) },
		"pgstore in server": func(t *testing.T) store.Memory { return openPG(t, pgstore.WithoutVectorExtension()) },
	}
}

// TestSemanticRanking: with an embeddings endpoint, a query ranks items
// by meaning — "what color" finds the item about blue first though they
// share no word — on every store and both of PostgreSQL's paths.
func TestSemanticRanking(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			emb := newEmbedServer(t)
			svc := memory.New(open(t), memory.Options{Embedder: memory.NewEmbeddings(memory.EmbeddingsConfig{
				BaseURL: emb.URL + "/v1", APIKey: "sk-test", Model: "topic-3",
			})})
			ctx, ns := context.Background(), []string{"memories", "ann"}
			mustPut(t, svc, memory.Put{Namespace: ns, Key: "colour", Value: map[string]any{"fact": "Ann likes blue"}})
			mustPut(t, svc, memory.Put{Namespace: ns, Key: "city", Value: map[string]any{"fact": "Ann lives in Lisbon"}})
			mustPut(t, svc, memory.Put{Namespace: ns, Key: "food", Value: map[string]any{"fact": "Ann drinks tea"}})
			page, err := svc.Search(ctx, run.MemorySearch{Prefix: ns, Query: "what color"})
			if err != nil {
				t.Fatal(err)
			}
			if got := keys(page); !slices.Equal(got[:1], []string{"colour"}) || len(got) != 3 {
				t.Fatalf("keys = %v, want colour first of 3", got)
			}
			if *page[0].Score < 0.9 || *page[1].Score > 0.1 {
				t.Fatalf("scores %v, %v: want the colour item near 1, the others near 0", *page[0].Score, *page[1].Score)
			}
			page, err = svc.Search(ctx, run.MemorySearch{Prefix: ns, Query: "which town", Limit: 1})
			if err != nil || !slices.Equal(keys(page), []string{"city"}) {
				t.Fatalf("which town = %v, %v", keys(page), err)
			}
			emb.mu.Lock()
			defer emb.mu.Unlock()
			if len(emb.requests) != 5 || emb.requests[0]["model"] != "topic-3" || emb.auth[0] != "Bearer sk-test" {
				t.Fatalf("requests = %v, auth %v", emb.requests, emb.auth)
			}
			if in := emb.requests[0]["input"].([]string); len(in) != 1 || in[0] != `{"fact":"Ann likes blue"}` {
				t.Fatalf("the first input = %q, want the value as JSON", in)
			}
		})
	}
}

// TestEmbeddingsDownStoresNothing: when the endpoint fails, the put fails
// as not available and nothing is stored.
func TestEmbeddingsDownStoresNothing(t *testing.T) {
	emb := newEmbedServer(t)
	emb.fail = true
	st := memstore.New()
	svc := memory.New(st, memory.Options{Embedder: memory.NewEmbeddings(memory.EmbeddingsConfig{BaseURL: emb.URL + "/v1"})})
	ctx, ns := context.Background(), []string{"m"}
	_, err := svc.Put(ctx, memory.Put{Namespace: ns, Key: "k", Value: map[string]any{"fact": "blue"}})
	if !errdefs.IsNotAvailable(err) {
		t.Fatalf("put with the endpoint down: %v, want NotAvailable", err)
	}
	if _, err := st.GetMemory(ctx, ns, "k", false); !errdefs.IsNotFound(err) {
		t.Fatalf("stored despite the failure: %v", err)
	}
	if _, err := svc.Search(ctx, run.MemorySearch{Query: "blue"}); !errdefs.IsNotAvailable(err) {
		t.Fatalf("search with the endpoint down: %v, want NotAvailable", err)
	}
}
