package memstore

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// PutReplica records r and forgets replicas not seen for
// store.ReplicaRetention.
func (s *Store) PutReplica(ctx context.Context, r store.Replica) error {
	if err := live(ctx); err != nil {
		return err
	}
	if err := store.ValidateReplica(r); err != nil {
		return err
	}
	now := store.StoredTime(time.Now())
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.replicas == nil {
		s.replicas = map[string]store.Replica{}
	}
	for id, old := range s.replicas {
		if old.SeenAt.Before(now.Add(-store.ReplicaRetention)) {
			delete(s.replicas, id)
		}
	}
	r.SeenAt = now
	s.replicas[r.ID] = r
	return nil
}

// GetReplica returns the replica named id, or NotFound.
func (s *Store) GetReplica(ctx context.Context, id string) (store.Replica, error) {
	if err := live(ctx); err != nil {
		return store.Replica{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	r, ok := s.replicas[id]
	if !ok {
		return store.Replica{}, errdefs.NotFoundf("memstore: replica %q not found", id)
	}
	return r, nil
}
