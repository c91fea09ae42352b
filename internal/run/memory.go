package run

import "time"

// MemoryItem is one item of an agent's long-term memory (the Agent
// Protocol's store item): a JSON object kept per tenant under a namespace
// (a path of labels such as ["memories", "ann"]) and a key, across
// conversations.
type MemoryItem struct {
	Namespace []string       `json:"namespace"`
	Key       string         `json:"key"`
	Value     map[string]any `json:"value"`
	CreatedAt time.Time      `json:"created_at"`
	UpdatedAt time.Time      `json:"updated_at"`
	// TTL, when set, is how long the item lives after it was last written
	// or read with a refresh; ExpiresAt is when it expires (zero: never).
	TTL       time.Duration `json:"-"`
	ExpiresAt time.Time     `json:"-"`
	// Score is the item's rank in a search by query (cosine similarity,
	// or a text rank without embeddings); nil otherwise.
	Score *float64 `json:"score,omitempty"`
}

// MemorySearch selects memory items under a namespace prefix.
type MemorySearch struct {
	// Prefix keeps the items whose namespace starts with these labels
	// (empty: every namespace of the tenant).
	Prefix []string
	// Filter keeps the items whose value contains it (JSON containment:
	// equal scalars, objects key by key, arrays holding every element).
	Filter map[string]any
	// Query ranks the items by meaning (with embeddings) or by text; empty
	// lists the newest first.
	Query string
	// Offset skips that many matches; Limit bounds the page (default 10,
	// at most 1000).
	Offset int
	Limit  int
	// RefreshTTL restarts the TTL of the items returned.
	RefreshTTL bool
}

// PageLimit returns q's limit, defaulted and bounded.
func (q MemorySearch) PageLimit() int { return pageLimit(q.Limit, 10) }

// NamespaceQuery lists the namespaces that hold memory items.
type NamespaceQuery struct {
	// Prefix and Suffix keep the namespaces that start (end) with these
	// labels.
	Prefix []string
	Suffix []string
	// MaxDepth, when positive, cuts longer namespaces to their first
	// MaxDepth labels (the cuts are listed once).
	MaxDepth int
	// Offset skips that many namespaces; Limit bounds the page (default
	// 100, at most 1000).
	Offset int
	Limit  int
}

// PageLimit returns q's limit, defaulted and bounded.
func (q NamespaceQuery) PageLimit() int { return pageLimit(q.Limit, 100) }
