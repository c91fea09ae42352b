package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// idleText is the run whose stream idle mode holds open on agentd: its
// first token comes at once, the next a minute later.
const idleText = "stream 100 every 60000ms"

// dialParallel bounds how many idle streams are being opened at once, so
// the listen backlog never overflows.
const dialParallel = 64

// runIdle opens c silent streams, waits until they are all established and
// the server settled, and reports the server's RSS growth per stream.
func runIdle(ctx context.Context, cfg config, client *http.Client) (result, error) {
	path := "/idle"
	var runID string
	if !cfg.baseline {
		var after int64
		var err error
		runID, after, err = idleRun(ctx, cfg, client)
		if err != nil {
			return result{}, err
		}
		defer cancelRun(client, cfg.target, runID)
		path = "/v1/runs/" + runID + "/events?after=" + strconv.FormatInt(after, 10)
	}
	before, err := readRSS(cfg.serverPID)
	if err != nil {
		return result{}, err
	}

	streamCtx, stopStreams := context.WithCancel(ctx)
	defer stopStreams()
	var (
		opened, open sync.WaitGroup
		established  atomic.Int64
		mu           sync.Mutex
		errs         errorLog
		sem          = make(chan struct{}, dialParallel)
	)
	start := time.Now()
	for range cfg.c {
		opened.Add(1)
		open.Add(1)
		go func() {
			defer open.Done()
			ok := false
			signal := func() {
				if !ok {
					ok = true
					opened.Done()
				}
			}
			defer signal()
			select {
			case sem <- struct{}{}:
			case <-streamCtx.Done():
				return
			}
			resp, err := openIdle(streamCtx, client, cfg.target+path)
			<-sem
			if err != nil {
				if !canceled(streamCtx) {
					mu.Lock()
					errs.add(err)
					mu.Unlock()
				}
				return
			}
			defer resp.Body.Close()
			established.Add(1)
			signal()
			_, _ = io.Copy(io.Discard, resp.Body) // until the stream is stopped
		}()
	}
	allOpen := make(chan struct{})
	go func() { opened.Wait(); close(allOpen) }()
	deadline := time.NewTimer(cfg.d)
	defer deadline.Stop()
	select {
	case <-allOpen:
	case <-deadline.C:
	case <-ctx.Done():
	}
	openTime := time.Since(start)
	select {
	case <-time.After(cfg.settle):
	case <-ctx.Done():
	}
	after, rssErr := readRSS(cfg.serverPID)
	stopStreams()
	open.Wait()
	<-allOpen
	if rssErr != nil {
		return result{}, rssErr
	}

	n := established.Load()
	res := result{
		Mode: "idle", Target: cfg.target, Baseline: cfg.baseline, Concurrency: cfg.c,
		ElapsedSec: openTime.Seconds(), Requests: n, Errors: errs.n,
		RSSBeforeKiB: before, RSSAfterKiB: after,
	}
	if errs.first != nil {
		res.FirstError = errs.first.Error()
	}
	if n > 0 && cfg.serverPID > 0 {
		res.KiBPerStream = float64(after-before) / float64(n)
	}
	return res, nil
}

// openIdle opens one stream and returns once its first line arrived (the
// server flushed its headers and opening comment).
func openIdle(ctx context.Context, client *http.Client, url string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return nil, err
	}
	if resp.StatusCode != http.StatusOK {
		defer resp.Body.Close()
		return nil, errStatus(resp)
	}
	var first [1]byte
	if _, err := io.ReadFull(resp.Body, first[:]); err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("stream closed before its first byte: %w", err)
	}
	return resp, nil
}

// idleRun starts the run whose stream idle mode holds, and returns its id
// and the seq after which its stream stays silent.
func idleRun(ctx context.Context, cfg config, client *http.Client) (string, int64, error) {
	agent, text, query, lastType := cfg.agent, idleText, "?wait=false", "delta"
	if cfg.parked {
		agent, text, query, lastType = "conformance", "tck-input-required", "", "run.end"
	}
	body := `{"text":` + strconv.Quote(text) + `}`
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.target+"/v1/agents/"+agent+"/messages"+query, strings.NewReader(body))
	if err != nil {
		return "", 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", 0, fmt.Errorf("start the idle run: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		return "", 0, fmt.Errorf("start the idle run: %w", errStatus(resp))
	}
	var run struct {
		ID string `json:"id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&run); err != nil || run.ID == "" {
		return "", 0, fmt.Errorf("start the idle run: answer without a run id (%v)", err)
	}
	seq, err := seqOf(ctx, client, cfg.target+"/v1/runs/"+run.ID+"/events", lastType)
	if err != nil {
		return "", 0, fmt.Errorf("probe the idle run %s: %w", run.ID, err)
	}
	return run.ID, seq, nil
}

// seqOf reads a run's stream up to the first event of type typ and returns
// its seq.
func seqOf(ctx context.Context, client *http.Client, url, typ string) (int64, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := client.Do(req)
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return 0, errStatus(resp)
	}
	sc := sseScanner{r: bufio.NewReader(resp.Body)}
	for {
		t, data, err := sc.next()
		if err != nil {
			return 0, fmt.Errorf("no %s event: %w", typ, err)
		}
		if t != typ {
			continue
		}
		var ev struct {
			Seq int64 `json:"seq"`
		}
		if err := json.Unmarshal(data, &ev); err != nil {
			return 0, fmt.Errorf("%s event data %.200s: %w", typ, data, err)
		}
		return ev.Seq, nil
	}
}

// cancelRun stops the idle run so it does not outlive the load.
func cancelRun(client *http.Client, target, runID string) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target+"/v1/runs/"+runID+"/cancel", nil)
	if err != nil {
		return
	}
	if resp, err := client.Do(req); err == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
	}
}
