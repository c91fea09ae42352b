package telemetry

import "agentd/internal/store"

// Unwrap returns the store the metrics wrap, so that a caller can discover
// the optional interfaces it implements (store.Threads).
func (s *instrumentedStore) Unwrap() store.Store { return s.Store }
