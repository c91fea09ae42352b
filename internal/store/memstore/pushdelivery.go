package memstore

import (
	"context"
	"slices"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// pushKey names a push config across tenants.
type pushKey struct{ tenant, task, id string }

// markPending adds k to the configs ClaimPushDeliveries looks at, or
// removes it. Callers hold s.mu for writing.
func (s *Store) markPending(k pushKey, pending bool) {
	if !pending {
		delete(s.pushPending, k)
		return
	}
	if s.pushPending == nil {
		s.pushPending = map[pushKey]struct{}{}
	}
	s.pushPending[k] = struct{}{}
}

// storedPush returns the stored config k and the map holding it. Callers
// hold s.mu.
func (s *Store) storedPush(k pushKey) (run.PushConfig, map[string]run.PushConfig, bool) {
	t := s.tenants[k.tenant]
	if t == nil || t.runs[k.task] == nil {
		return run.PushConfig{}, nil, false
	}
	m := t.runs[k.task].push
	c, ok := m[k.id]
	return c, m, ok
}

// parkedAtVersion reports whether c is parked at its task's current
// version. Callers hold s.mu.
func (s *Store) parkedAtVersion(k pushKey, c run.PushConfig) bool {
	if c.ParkedVersion == 0 {
		return false
	}
	r := s.tenants[k.tenant].runs[k.task]
	return r.task != "" && headerOf(r.task).version == c.ParkedVersion
}

// ClaimPushDeliveries claims up to limit pending configs whose claim is
// free or expired for owner until now+ttl.
func (s *Store) ClaimPushDeliveries(ctx context.Context, owner string, ttl time.Duration, limit int) ([]run.PushConfig, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	if owner == "" || ttl <= 0 || limit <= 0 {
		return nil, errdefs.Validationf("claim push deliveries: owner %q, ttl %v and limit %d must be set and positive", owner, ttl, limit)
	}
	at := time.Now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []run.PushConfig
	for k := range s.pushPending {
		if len(out) == limit {
			break
		}
		c, m, ok := s.storedPush(k)
		if !ok || c.Done {
			delete(s.pushPending, k) // evicted with its run, or done
			continue
		}
		if (c.Claim.Owner != "" && c.Claim.ExpiresAt.After(at)) || s.parkedAtVersion(k, c) {
			continue
		}
		c.Claim = run.PushClaim{Owner: owner, Generation: c.Claim.Generation + 1, ExpiresAt: at.Add(ttl)}
		m[k.id] = c
		c.Config, c.Tenant = slices.Clone(c.Config), k.tenant
		out = append(out, c)
	}
	return out, nil
}

// SavePushDelivery records c's cursor if its claim is still held.
func (s *Store) SavePushDelivery(ctx context.Context, c run.PushConfig, ttl time.Duration) (run.PushConfig, error) {
	if err := live(ctx); err != nil {
		return run.PushConfig{}, err
	}
	if ttl <= 0 {
		return run.PushConfig{}, errdefs.Validationf("save push delivery of config %q of task %q: ttl %v is not positive", c.ID, c.TaskID, ttl)
	}
	k := pushKey{run.TenantFrom(ctx), c.TaskID, c.ID}
	s.mu.Lock()
	defer s.mu.Unlock()
	cur, m, ok := s.storedPush(k)
	if !ok {
		return run.PushConfig{}, errdefs.NotFoundf("push config %q of task %q not found", c.ID, c.TaskID)
	}
	if cur.Claim.Owner != c.Claim.Owner || cur.Claim.Generation != c.Claim.Generation || c.Claim.Owner == "" {
		return run.PushConfig{}, errdefs.Conflictf("the delivery claim on push config %q of task %q is held by another owner than %q", c.ID, c.TaskID, c.Claim.Owner)
	}
	cur.Delivered, cur.Done, cur.ParkedVersion = c.Delivered, c.Done, c.ParkedVersion
	cur.Claim.ExpiresAt = time.Now().Add(ttl)
	if c.Done || c.ParkedVersion != 0 {
		cur.Claim.Owner = "" // a parked config stays pending, for the sweep
	}
	if c.Done {
		s.markPending(k, false)
	}
	m[k.id] = cur
	out := outPushConfig(cur)
	out.Claim, out.Tenant = cur.Claim, k.tenant
	return out, nil
}

// SavePushDeliveries saves each config of cs in its own tenant.
func (s *Store) SavePushDeliveries(ctx context.Context, cs []run.PushConfig, ttl time.Duration) ([]bool, error) {
	if err := live(ctx); err != nil {
		return nil, err
	}
	saved := make([]bool, len(cs))
	for i, c := range cs {
		_, err := s.SavePushDelivery(run.WithTenant(ctx, c.Tenant), c, ttl)
		switch {
		case err == nil:
			saved[i] = true
		case errdefs.IsConflict(err), errdefs.IsNotFound(err):
		default:
			return nil, err
		}
	}
	return saved, nil
}
