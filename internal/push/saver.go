package push

import (
	"context"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// saveBatch bounds the cursors one store round trip writes.
const saveBatch = 512

// cursorSaver writes the delivery cursors of one replica's deliveries.
// Each delivery waits for its own cursor to be saved before it sends the
// next update (so a kill repeats at most the update in flight), but the
// saves that wait together go to the store in one round trip: with many
// webhooks, one commit serves them all, as a group commit does.
type cursorSaver struct {
	st   Store
	ttl  time.Duration
	reqs chan saveReq
}

type saveReq struct {
	c   run.PushConfig
	res chan error // buffered: the saver never blocks on it
}

func newCursorSaver(st Store, ttl time.Duration) *cursorSaver {
	return &cursorSaver{st: st, ttl: ttl, reqs: make(chan saveReq)}
}

// run serves saves until ctx ends.
func (s *cursorSaver) run(ctx context.Context) {
	for {
		var batch []saveReq
		select {
		case <-ctx.Done():
			return
		case r := <-s.reqs:
			batch = append(batch, r)
		}
	more:
		for len(batch) < saveBatch {
			select {
			case r := <-s.reqs:
				batch = append(batch, r)
			default:
				break more
			}
		}
		s.write(ctx, batch)
	}
}

func (s *cursorSaver) write(ctx context.Context, batch []saveReq) {
	cs := make([]run.PushConfig, len(batch))
	for i, r := range batch {
		cs[i] = r.c
	}
	saved, err := s.st.SavePushDeliveries(ctx, cs, s.ttl)
	for i, r := range batch {
		switch {
		case err != nil:
			r.res <- err
		case !saved[i]:
			r.res <- errdefs.Conflictf("push config %s of task %s: the delivery claim was lost or the config deleted", r.c.ID, r.c.TaskID)
		default:
			r.res <- nil
		}
	}
}

// save records c's cursor (c.Delivered, c.Done) and extends its claim;
// Conflict when the claim was lost or the config is gone.
func (s *cursorSaver) save(ctx context.Context, c run.PushConfig) error {
	r := saveReq{c: c, res: make(chan error, 1)}
	select {
	case s.reqs <- r:
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-r.res:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}
