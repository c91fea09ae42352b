package pgstore

import (
	"context"
	"fmt"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// PutReplica records r and forgets replicas not seen for
// store.ReplicaRetention, in one round trip.
func (s *Store) PutReplica(ctx context.Context, r store.Replica) error {
	if err := store.ValidateReplica(r); err != nil {
		return err
	}
	now := s.now()
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `WITH gone AS (DELETE FROM replicas WHERE seen_at < $4 AND id <> $1)
			INSERT INTO replicas (id, url, seen_at) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET url = EXCLUDED.url, seen_at = EXCLUDED.seen_at`,
			r.ID, r.URL, now, now.Add(-store.ReplicaRetention))
		return err
	})
	return s.classify(fmt.Sprintf("record replica %q", r.ID), err)
}

// GetReplica returns the replica named id, or NotFound.
func (s *Store) GetReplica(ctx context.Context, id string) (store.Replica, error) {
	r := store.Replica{ID: id}
	var found bool
	err := s.retry(ctx, func(ctx context.Context) error {
		err := s.pool.QueryRow(ctx, `SELECT url, seen_at FROM replicas WHERE id = $1`, id).Scan(&r.URL, &r.SeenAt)
		found = err == nil
		if errNoRows(err) {
			return nil
		}
		return err
	})
	if err != nil {
		return store.Replica{}, s.classify(fmt.Sprintf("get replica %q", id), err)
	}
	if !found {
		return store.Replica{}, errdefs.NotFoundf("pgstore: replica %q not found", id)
	}
	return r, nil
}
