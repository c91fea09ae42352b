package engine

import (
	"fmt"
	"maps"
	"reflect"
	"sync"

	"agentd/internal/errdefs"
)

// Dependencies is the container a host fills with a run's collaborators
// (model provider, tool registry, …) and engines read at run time. Keys
// are comparable values; prefer a typed key per dependency.
//
// It is safe for concurrent use. The zero value is ready; reads and
// Remove on a nil *Dependencies behave as on an empty one, and Set on nil
// panics because the value would be lost.
type Dependencies struct {
	mu    sync.RWMutex
	items map[any]any
}

// Set stores value under key, replacing any previous value.
func (d *Dependencies) Set(key, value any) {
	if d == nil {
		panic(fmt.Sprintf("engine: Dependencies.Set(%v) on a nil *Dependencies", key))
	}
	d.mu.Lock()
	if d.items == nil {
		d.items = make(map[any]any)
	}
	d.items[key] = value
	d.mu.Unlock()
}

// Get returns the value stored under key.
func (d *Dependencies) Get(key any) (any, bool) {
	if d == nil {
		return nil, false
	}
	d.mu.RLock()
	v, ok := d.items[key]
	d.mu.RUnlock()
	return v, ok
}

// Has reports whether key is present.
func (d *Dependencies) Has(key any) bool {
	_, ok := d.Get(key)
	return ok
}

// Remove deletes key; a missing key is a no-op.
func (d *Dependencies) Remove(key any) {
	if d == nil {
		return
	}
	d.mu.Lock()
	delete(d.items, key)
	d.mu.Unlock()
}

// Clone returns an independent container holding the same values (the
// values themselves are shared), so a caller can add per-run entries
// without touching the base. Cloning nil returns nil.
func (d *Dependencies) Clone() *Dependencies {
	if d == nil {
		return nil
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	return &Dependencies{items: maps.Clone(d.items)}
}

// GetDep returns the dependency under key as a T: a missing key is a
// NotFound error and a value of another type a Validation error, both
// naming the key, so wiring mistakes surface early instead of as nil
// dereferences deep in an engine.
func GetDep[T any](d *Dependencies, key any) (T, error) {
	var zero T
	v, ok := d.Get(key)
	if !ok {
		return zero, errdefs.NotFoundf("dependency %v: not registered", key)
	}
	t, ok := v.(T)
	if !ok {
		return zero, errdefs.Validationf("dependency %v: holds %T, want %v", key, v, reflect.TypeFor[T]())
	}
	return t, nil
}
