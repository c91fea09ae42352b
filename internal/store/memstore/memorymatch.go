package memstore

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"agentd/internal/store"
)

// memoryHit is a matching record and its rank.
type memoryHit struct {
	r      *memoryRecord
	score  float64
	ranked bool
}

// matchMemory returns the live records of m that q selects, in
// store.MemoryQuery's order.
func matchMemory(m map[memoryKey]*memoryRecord, q store.MemoryQuery, at time.Time) []memoryHit {
	terms := slices.Collect(maps.Keys(wordsOf(q.Query)))
	var hits []memoryHit
	for _, r := range m {
		if !r.live(at) || !hasPrefix(r.namespace, q.Prefix) || !jsonContains(r.valueCache, q.Filter) {
			continue
		}
		h := memoryHit{r: r}
		switch {
		case q.Vector != nil:
			if len(r.vector) != len(q.Vector) {
				continue
			}
			h.score, h.ranked = dot(r.vector, q.Vector), true
		case len(terms) > 0:
			h.score, h.ranked = textScore(r.words, terms), true
			if h.score == 0 {
				continue
			}
		}
		hits = append(hits, h)
	}
	slices.SortFunc(hits, func(a, b memoryHit) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := b.r.updated.Compare(a.r.updated); c != 0 && !a.ranked {
			return c
		}
		if c := slices.Compare(a.r.namespace, b.r.namespace); c != 0 {
			return c
		}
		return cmp.Compare(a.r.key, b.r.key)
	})
	return hits
}

// wordsOf returns the lower-cased words (runs of letters and digits) of
// text. The embedded store ranks text by them: it has no stemming and no
// stop words, unlike PostgreSQL's full-text search.
func wordsOf(text string) map[string]bool {
	words := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		words[w] = true
	}
	return words
}

// textScore is the share of the query's words that the item's text holds.
func textScore(words map[string]bool, terms []string) float64 {
	n := 0
	for _, t := range terms {
		if words[t] {
			n++
		}
	}
	return float64(n) / float64(len(terms))
}

// dot is the cosine similarity of two unit vectors.
func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// jsonContains reports whether v contains filter as PostgreSQL's jsonb @>
// does: objects key by key, arrays holding every element of the filter's
// array, scalars equal.
func jsonContains(v, filter any) bool {
	switch f := filter.(type) {
	case nil:
		return v == nil
	case map[string]any:
		o, ok := v.(map[string]any)
		if !ok {
			return false
		}
		for k, fv := range f {
			ov, present := o[k]
			if !present || !jsonContains(ov, fv) {
				return false
			}
		}
		return true
	case []any:
		a, ok := v.([]any)
		if !ok {
			return false
		}
		for _, fe := range f {
			if !slices.ContainsFunc(a, func(e any) bool { return jsonContains(e, fe) }) {
				return false
			}
		}
		return true
	}
	return v == filter
}
