package memstore

import (
	"context"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

var _ store.Pruner = (*Store)(nil)

// PruneFinished deletes the event logs and checkpoints of runs that
// finished before q.Before (store.Pruner). It walks the finished runs in
// the order they finished, skipping those pruned already, and holds the
// write lock for one batch.
func (s *Store) PruneFinished(ctx context.Context, q store.PruneQuery) (store.Pruned, error) {
	if err := live(ctx); err != nil {
		return store.Pruned{}, err
	}
	if q.Limit <= 0 {
		return store.Pruned{}, errdefs.Validationf("prune finished runs: limit %d must be positive", q.Limit)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	var out store.Pruned
	for _, f := range s.finished[s.finishedHead:] {
		if !f.at.Before(q.Before) || out.Runs >= int64(q.Limit) {
			break
		}
		if f.at.Before(q.After) || f.tenant.runs[f.key.id] != f.run || !f.run.terminal {
			continue // pruned before; forgotten; or no longer finished
		}
		events := f.run.log.lastSeq() - f.run.log.pruned
		cps := int64(len(f.run.checkpoints))
		if events == 0 && cps == 0 {
			continue
		}
		f.run.log.prune(f.run.log.lastSeq())
		f.run.deleteCheckpoints()
		out.Runs++
		out.Events += events
		out.Checkpoints += cps
		out.Through = f.at
	}
	return out, nil
}
