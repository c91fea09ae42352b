package memory

import (
	"context"
	"math"
	"time"

	"agentd/internal/run"
	"agentd/internal/store"
)

// Service is the long-term memory over a store: it validates requests,
// extracts the text each item is searched by, embeds it when an embeddings
// endpoint is configured, and ranks searches by meaning or by text.
type Service struct {
	st    store.Memory
	embed Embedder // nil: text search
	index []string // the value's fields an item is searched by; nil: all of it
}

// Memory is what a face serves of the long-term memory: the REST API and
// the Agent Protocol's store routes take one (a *Service).
type Memory interface {
	Put(ctx context.Context, p Put) (run.MemoryItem, error)
	Get(ctx context.Context, namespace []string, key string, refresh bool) (run.MemoryItem, error)
	Delete(ctx context.Context, namespace []string, key string) error
	Search(ctx context.Context, q run.MemorySearch) ([]run.MemoryItem, error)
	Namespaces(ctx context.Context, q run.NamespaceQuery) ([][]string, error)
}

var _ Memory = (*Service)(nil)

// Options configure a Service.
type Options struct {
	// Embedder, when set, gives every indexed item a vector and ranks
	// queries by cosine similarity; nil ranks them by text.
	Embedder Embedder
	// Index are the value's fields (dotted paths) an item is searched by
	// when its put names none; empty: the whole value.
	Index []string
}

// New returns the memory service over st.
func New(st store.Memory, opts Options) *Service {
	return &Service{st: st, embed: opts.Embedder, index: opts.Index}
}

// Semantic reports whether searches rank by meaning (an embeddings
// endpoint is configured).
func (s *Service) Semantic() bool { return s.embed != nil }

// Put is a write of one item.
type Put struct {
	Namespace []string
	Key       string
	Value     map[string]any
	// TTLMinutes, when positive, is how long the item lives after its
	// last write or refreshed read, in minutes (the Agent Protocol's unit).
	TTLMinutes float64
	// Index are the fields to search the item by (nil: the service's
	// default); NoIndex leaves it out of every query search.
	Index   []string
	NoIndex bool
}

// Put stores the item whole, embedding its text when the service has an
// embeddings endpoint; nothing is stored when a check or the endpoint
// fails.
func (s *Service) Put(ctx context.Context, p Put) (run.MemoryItem, error) {
	if err := checkNamespace("namespace", p.Namespace, true); err != nil {
		return run.MemoryItem{}, err
	}
	if err := checkKey(p.Key); err != nil {
		return run.MemoryItem{}, err
	}
	if p.Value == nil {
		return run.MemoryItem{}, badField("value", "required: a JSON object")
	}
	value, err := plainJSON("value", p.Value)
	if err != nil {
		return run.MemoryItem{}, err
	}
	ttl, err := ttlOf(p.TTLMinutes)
	if err != nil {
		return run.MemoryItem{}, err
	}
	rec := store.MemoryRecord{Item: run.MemoryItem{Namespace: p.Namespace, Key: p.Key, Value: value, TTL: ttl}}
	if !p.NoIndex {
		fields := p.Index
		if fields == nil {
			fields = s.index
		}
		if rec.Text, err = textOf(value, fields); err != nil {
			return run.MemoryItem{}, err
		}
		if rec.Vector, err = s.vector(ctx, rec.Text); err != nil {
			return run.MemoryItem{}, err
		}
	}
	return s.st.PutMemory(ctx, rec)
}

// ttlOf turns a TTL in minutes into a duration (0: none).
func ttlOf(minutes float64) (time.Duration, error) {
	if minutes < 0 || math.IsNaN(minutes) || minutes > 100*365*24*60 {
		return 0, badField("ttl", "%v must be a positive number of minutes (at most a century)", minutes)
	}
	return time.Duration(minutes * float64(time.Minute)), nil
}

// vector embeds text, nil without an endpoint or a text.
func (s *Service) vector(ctx context.Context, text string) ([]float32, error) {
	if s.embed == nil || text == "" {
		return nil, nil
	}
	vs, err := s.embed.Embed(ctx, []string{text})
	if err != nil {
		return nil, err
	}
	return vs[0], nil
}

// Get returns the item; refresh restarts its TTL.
func (s *Service) Get(ctx context.Context, namespace []string, key string, refresh bool) (run.MemoryItem, error) {
	if err := checkNamespace("namespace", namespace, true); err != nil {
		return run.MemoryItem{}, err
	}
	if err := checkKey(key); err != nil {
		return run.MemoryItem{}, err
	}
	return s.st.GetMemory(ctx, namespace, key, refresh)
}

// Delete deletes the item (NotFound when absent).
func (s *Service) Delete(ctx context.Context, namespace []string, key string) error {
	if err := checkNamespace("namespace", namespace, true); err != nil {
		return err
	}
	if err := checkKey(key); err != nil {
		return err
	}
	return s.st.DeleteMemory(ctx, namespace, key)
}

// Search returns one page of the items under q's prefix; a query ranks
// them by meaning with an embeddings endpoint, else by text.
func (s *Service) Search(ctx context.Context, q run.MemorySearch) ([]run.MemoryItem, error) {
	if err := checkNamespace("namespace_prefix", q.Prefix, false); err != nil {
		return nil, err
	}
	if err := checkPage(q.Offset, q.Limit); err != nil {
		return nil, err
	}
	filter, err := plainJSON("filter", q.Filter)
	if err != nil {
		return nil, err
	}
	q.Filter = filter
	sq := store.MemoryQuery{MemorySearch: q}
	if q.Query != "" && s.embed != nil {
		if sq.Vector, err = s.vector(ctx, q.Query); err != nil {
			return nil, err
		}
		sq.Query = ""
	}
	return s.st.SearchMemory(ctx, sq)
}

// Namespaces lists one page of the namespaces holding items.
func (s *Service) Namespaces(ctx context.Context, q run.NamespaceQuery) ([][]string, error) {
	if err := checkNamespace("prefix", q.Prefix, false); err != nil {
		return nil, err
	}
	if err := checkNamespace("suffix", q.Suffix, false); err != nil {
		return nil, err
	}
	if q.MaxDepth < 0 {
		return nil, badField("max_depth", "%d must not be negative", q.MaxDepth)
	}
	if err := checkPage(q.Offset, q.Limit); err != nil {
		return nil, err
	}
	return s.st.ListMemoryNamespaces(ctx, q)
}
