package tool

import "maps"

// Clone returns a registry with the tools r holds now and its settings:
// a caller adds its own tools to the copy (a workflow agent's
// submit_result) without offering them to everyone else.
func (r *Registry) Clone() *Registry {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return &Registry{MaxParallel: r.MaxParallel, MaxResultBytes: r.MaxResultBytes, tools: maps.Clone(r.tools)}
}
