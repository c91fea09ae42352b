package runtime

// Draining reports whether the runtime is shutting down: faces that hold
// a request open for a run tell a closing server from a caller that gave
// up (the first leaves the run to recovery, the second may cancel it).
func (r *Runtime) Draining() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.draining
}
