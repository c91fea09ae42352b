package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/run"
)

// maxFrameEvents caps the events of one frame (the schema checks it too).
// The cap is what lets ReadEvents bound a page's frames by one index range:
// a frame that starts at or before seq n ends before n+maxFrameEvents.
const maxFrameEvents = 256

// frameEvent is one element of a frame's JSON array. The run id is the
// frame's; Data is kept as the runtime's bytes.
type frameEvent struct {
	Seq  int64           `json:"seq"`
	Type string          `json:"type"`
	Time time.Time       `json:"time"`
	Data json.RawMessage `json:"data"`
}

// encodeFrame writes evs as a JSON array of frameEvent: Data was
// validated by plan and is copied verbatim, never re-encoded — encoding/json
// would compact it, and a replayed event must be byte for byte the one the
// writer gave (TestReadEventsKeepsDataBytes). Every string is encoded by
// encoding/json; frame_test.go fuzzes the whole against encoding/json.
func encodeFrame(evs []run.Event) []byte {
	n := 2
	for _, e := range evs {
		n += len(e.Data) + len(e.Type) + 80
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, e := range evs {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, `{"seq":`...)
		b = strconv.AppendInt(b, e.Seq, 10)
		b = append(b, `,"type":`...)
		typ, _ := json.Marshal(e.Type) // a string always encodes
		b = append(b, typ...)
		b = append(b, `,"time":"`...)
		b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","data":`...)
		b = append(b, e.Data...)
		b = append(b, '}')
	}
	return append(b, ']')
}

// ReadEvents returns up to limit events of run with seq > max(after,
// PrunedThrough), and the log's bounds, all from one snapshot: the head
// row and the frames overlapping (from, from+limit] come in one query.
func (s *Store) ReadEvents(ctx context.Context, runID string, after int64, limit int) (run.EventPage, error) {
	if after < 0 || limit < 0 {
		return run.EventPage{}, errdefs.Validationf("pgstore: read events of run %q: after (%d) and limit (%d) must not be negative", runID, after, limit)
	}
	limit = pageSize(limit, 100, 1000)
	tenant := run.TenantFrom(ctx)
	var page run.EventPage
	err := s.retry(ctx, func(ctx context.Context) error {
		page = run.EventPage{}
		rows, err := s.pool.Query(ctx, readEventsSQL, tenant, runID, after, limit, maxFrameEvents)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			var frame []byte
			if err := rows.Scan(&page.LastSeq, &page.PrunedThrough, &frame); err != nil {
				return err
			}
			if frame == nil || len(page.Events) >= limit {
				continue
			}
			start := max(after, page.PrunedThrough)
			if page.Events, err = decodeFrame(page.Events, frame, runID, start, limit); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return run.EventPage{}, s.classify(fmt.Sprintf("read events of run %q after %d", runID, after), err)
	}
	return page, nil
}

// The lateral join returns the head alone (frame NULL) when no frame
// matches. Frames are those ending after start and starting at or before
// start+limit, which the frame-size cap turns into a range on seq_to.
const readEventsSQL = `
SELECT r.last_seq, r.pruned_through, f.events::text
FROM runs r
LEFT JOIN LATERAL (
	SELECT ef.seq_to, ef.events FROM event_frames ef
	WHERE ef.tenant = r.tenant AND ef.run_id = r.run_id
	  AND ef.seq_to > greatest($3::bigint, r.pruned_through)
	  AND ef.seq_to < greatest($3::bigint, r.pruned_through) + $4 + $5
	  AND ef.seq_from <= greatest($3::bigint, r.pruned_through) + $4
) f ON true
WHERE r.tenant = $1 AND r.run_id = $2
ORDER BY f.seq_to`

// decodeFrame appends to dst the events of frame with seq > start, until dst
// holds limit events.
func decodeFrame(dst []run.Event, frame []byte, runID string, start int64, limit int) ([]run.Event, error) {
	var evs []frameEvent
	if err := json.Unmarshal(frame, &evs); err != nil {
		return dst, errdefs.Internalf("pgstore: run %q: corrupt event frame: %w", runID, err)
	}
	for _, e := range evs {
		if e.Seq <= start {
			continue
		}
		if len(dst) >= limit {
			break
		}
		dst = append(dst, run.Event{RunID: runID, Seq: e.Seq, Type: e.Type, Time: e.Time, Data: e.Data})
	}
	return dst, nil
}

// PruneEvents deletes the events of run with seq <= through. The head's
// pruned_through only moves forward and never past last_seq; a frame that
// straddles it stays until a later prune covers it, and reads skip its
// pruned part.
func (s *Store) PruneEvents(ctx context.Context, runID string, through int64) error {
	if through < 0 {
		return errdefs.Validationf("pgstore: prune events of run %q: through (%d) must not be negative", runID, through)
	}
	tenant := run.TenantFrom(ctx)
	err := s.retry(ctx, func(ctx context.Context) error {
		_, err := s.pool.Exec(ctx, `
WITH head AS (
	UPDATE runs SET pruned_through = least(greatest(pruned_through, $3), last_seq)
	WHERE tenant = $1 AND run_id = $2
	RETURNING pruned_through
)
DELETE FROM event_frames ef USING head
WHERE ef.tenant = $1 AND ef.run_id = $2 AND ef.seq_to <= head.pruned_through`, tenant, runID, through)
		return err
	})
	return s.classify(fmt.Sprintf("prune events of run %q through %d", runID, through), err)
}

// pageSize applies a listing's default and maximum to a non-negative limit.
func pageSize(limit, def, most int) int {
	switch {
	case limit == 0:
		return def
	case limit > most:
		return most
	}
	return limit
}
