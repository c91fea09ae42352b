package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"time"
)

// runSchedule is the schedule mode: c schedules of the agent firing every
// second for d, then the firing delay of each tick's run — from the tick
// to the run's created_at (stamped by the server as it builds the run,
// before its one commit) — read back from GET /v1/runs. Errors count the
// ticks that started no run, or more than one.
func runSchedule(ctx context.Context, cfg config, c *http.Client) (result, error) {
	start := time.Now()
	end := start.Add(cfg.d)
	ids := map[string]bool{}
	defer func() {
		for id := range ids {
			req, _ := http.NewRequestWithContext(context.WithoutCancel(ctx), http.MethodDelete, cfg.target+"/v1/schedules/"+url.PathEscape(id), nil)
			if res, err := c.Do(req); err == nil {
				res.Body.Close()
			}
		}
	}()
	want := 0
	for range cfg.c {
		var sc struct {
			ID         string     `json:"id"`
			NextFireAt *time.Time `json:"next_fire_at"`
		}
		body, _ := json.Marshal(map[string]any{"agent_id": cfg.agent, "cron": "* * * * * *", "text": "tick", "end_at": end})
		if err := doJSON(ctx, c, http.MethodPost, cfg.target+"/v1/schedules", body, http.StatusCreated, &sc); err != nil {
			return result{}, err
		}
		ids[sc.ID] = true
		for t := *sc.NextFireAt; t.Before(end); t = t.Add(time.Second) {
			want++
		}
	}
	select { // the last ticks' runs are created within a second
	case <-time.After(time.Until(end) + 2*time.Second):
	case <-ctx.Done():
		return result{}, ctx.Err()
	}
	delays, err := firingDelays(ctx, cfg, c, ids, start)
	if err != nil {
		return result{}, err
	}
	res := result{Mode: "schedule", Target: cfg.target, Concurrency: cfg.c, ElapsedSec: time.Since(start).Seconds(),
		Requests: int64(len(delays)), Latency: summarise(delays)}
	if miss := want - len(delays); miss != 0 {
		res.Errors, res.FirstError = int64(max(miss, -miss)), fmt.Sprintf("%d ticks fired, %d due", len(delays), want)
	}
	return res, nil
}

// firingDelays pages through the runs created since start and returns,
// for each run of the schedules ids, its created_at minus its tick.
func firingDelays(ctx context.Context, cfg config, c *http.Client, ids map[string]bool, start time.Time) ([]time.Duration, error) {
	var out []time.Duration
	seen := map[string]bool{}
	cursor := ""
	for {
		var page struct {
			Runs []struct {
				CreatedAt time.Time      `json:"created_at"`
				Metadata  map[string]any `json:"metadata"`
			} `json:"runs"`
			NextCursor string `json:"next_cursor"`
		}
		u := cfg.target + "/v1/runs?limit=100&agent=" + url.QueryEscape(cfg.agent) + "&cursor=" + url.QueryEscape(cursor)
		if err := doJSON(ctx, c, http.MethodGet, u, nil, http.StatusOK, &page); err != nil {
			return nil, err
		}
		for _, r := range page.Runs {
			id, _ := r.Metadata["schedule_id"].(string)
			stamp, _ := r.Metadata["schedule_tick"].(string)
			tick, err := time.Parse(time.RFC3339Nano, stamp)
			if !ids[id] || err != nil || seen[id+stamp] {
				continue
			}
			seen[id+stamp] = true
			out = append(out, r.CreatedAt.Sub(tick))
		}
		if page.NextCursor == "" || len(page.Runs) == 0 || page.Runs[len(page.Runs)-1].CreatedAt.Before(start) {
			return out, nil
		}
		cursor = page.NextCursor
	}
}

// doJSON sends body (when not nil) and decodes an answer of status into v.
func doJSON(ctx context.Context, c *http.Client, method, u string, body []byte, status int, v any) error {
	req, err := http.NewRequestWithContext(ctx, method, u, bytes.NewReader(body))
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := c.Do(req)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	if res.StatusCode != status {
		var b bytes.Buffer
		_, _ = b.ReadFrom(res.Body)
		return fmt.Errorf("%s %s: status %d: %s", method, u, res.StatusCode, b.String())
	}
	return json.NewDecoder(res.Body).Decode(v)
}
