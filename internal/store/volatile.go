package store

// Volatile is the optional interface of a Store that keeps its data in
// this process's memory, with this process its only writer (memstore): an
// event logged by the runtime is then exactly as durable as one in the
// store, so the run's log shows live events to readers as soon as they
// are logged and writes them behind, and a checkpoint is held rather than
// written until another attempt needs it. It states a fact about the
// store, not a trust in it: no check is skipped. A store that replicas
// share or that outlives the process must not declare it; a wrapper
// (instrumentation) declares what it wraps does.
type Volatile interface {
	Volatile() bool
}

// IsVolatile reports whether s declares itself volatile.
func IsVolatile(s Store) bool {
	v, ok := s.(Volatile)
	return ok && v.Volatile()
}
