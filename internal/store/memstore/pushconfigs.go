package memstore

import (
	"context"
	"slices"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// PutPushConfig creates or replaces the config (TaskID, ID).
func (s *Store) PutPushConfig(ctx context.Context, c run.PushConfig) error {
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
	c.Done, c.ParkedVersion, c.Tenant = false, 0, ""
	s.mu.Lock()
	defer s.mu.Unlock()
	r := s.writeTenant(ctx).run(c.TaskID)
	if r.push == nil {
		r.push = map[string]run.PushConfig{}
	}
	// A replace ends the claim on the old config: a new generation, free.
	c.Claim = run.PushClaim{Generation: r.push[c.ID].Claim.Generation + 1}
	r.push[c.ID] = c
	s.markPending(pushKey{run.TenantFrom(ctx), c.TaskID, c.ID}, true)
	return nil
}

// GetPushConfig returns the config (taskID, id).
func (s *Store) GetPushConfig(ctx context.Context, taskID, id string) (run.PushConfig, error) {
	if err := live(ctx); err != nil {
		return run.PushConfig{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if c, ok := s.pushConfigs(ctx, taskID)[id]; ok {
		return outPushConfig(c), nil
	}
	return run.PushConfig{}, errdefs.NotFoundf("push config %q of task %q not found", id, taskID)
}

// ListPushConfigs returns the configs of taskID, ordered by id.
func (s *Store) ListPushConfigs(ctx context.Context, taskID string) ([]run.PushConfig, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []run.PushConfig
	for _, c := range s.pushConfigs(ctx, taskID) {
		out = append(out, outPushConfig(c))
	}
	slices.SortFunc(out, func(a, b run.PushConfig) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

// DeletePushConfig deletes the config (taskID, id); NotFound if absent.
func (s *Store) DeletePushConfig(ctx context.Context, taskID, id string) error {
	if err := live(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.pushConfigs(ctx, taskID)[id]; !ok {
		return errdefs.NotFoundf("push config %q of task %q not found", id, taskID)
	}
	t := s.readTenant(ctx)
	r := t.runs[taskID]
	delete(r.push, id)
	s.markPending(pushKey{run.TenantFrom(ctx), taskID, id}, false)
	if len(r.push) == 0 {
		r.push = nil
		t.dropIfEmpty(taskID)
	}
	return nil
}

// pushConfigs returns the configs of taskID by id. Callers hold s.mu.
func (s *Store) pushConfigs(ctx context.Context, taskID string) map[string]run.PushConfig {
	if t := s.readTenant(ctx); t != nil && t.runs[taskID] != nil {
		return t.runs[taskID].push
	}
	return nil
}

// outPushConfig is a copy of a stored config as readers see it: without
// its claim, which only ClaimPushDeliveries hands out.
func outPushConfig(c run.PushConfig) run.PushConfig {
	c.Config = slices.Clone(c.Config)
	c.Claim = run.PushClaim{}
	return c
}
