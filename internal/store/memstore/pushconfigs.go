package memstore

import (
	"context"
	"slices"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/store"
)

// PutPushConfig creates or replaces the config (TaskID, ID).
func (s *Store) PutPushConfig(ctx context.Context, c store.PushConfig) error {
	if err := live(ctx); err != nil {
		return err
	}
	if c.TaskID == "" || c.ID == "" {
		return errdefs.Validationf("put push config %q of task %q: task id and id are required", c.ID, c.TaskID)
	}
	var err error
	if c.Config, err = inRequiredRaw(c.Config, func() string { return "push config " + c.ID + " of task " + c.TaskID }); err != nil {
		return err
	}
	c.CreatedAt = orNow(c.CreatedAt, now())
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.writeTenant(ctx)
	if t.push[c.TaskID] == nil {
		t.push[c.TaskID] = map[string]store.PushConfig{}
	}
	t.push[c.TaskID][c.ID] = c
	return nil
}

// GetPushConfig returns the config (taskID, id).
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (store.PushConfig, error) {
	if err := live(ctx); err != nil {
		return store.PushConfig{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if t := s.readTenant(ctx); t != nil {
		if c, ok := t.push[taskID][id]; ok {
			return outPushConfig(c), nil
		}
	}
	return store.PushConfig{}, errdefs.NotFoundf("push config %q of task %q not found", id, taskID)
}

// ListPushConfigs returns the configs of taskID, ordered by id.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]store.PushConfig, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	t := s.readTenant(ctx)
	if t == nil {
		return nil, nil
	}
	var out []store.PushConfig
	for _, c := range t.push[taskID] {
		out = append(out, outPushConfig(c))
	}
	slices.SortFunc(out, func(a, b store.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeletePushConfig deletes the config (taskID, id); NotFound if absent.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	t := s.readTenant(ctx)
	if t == nil {
		return errdefs.NotFoundf("push config %q of task %q not found", id, taskID)
	}
	if _, ok := t.push[taskID][id]; !ok {
		return errdefs.NotFoundf("push config %q of task %q not found", id, taskID)
	}
	delete(t.push[taskID], id)
	if len(t.push[taskID]) == 0 {
		delete(t.push, taskID)
	}
	return nil
}

func outPushConfig(c store.PushConfig) store.PushConfig {
	c.Config = slices.Clone(c.Config)
	return c
}
