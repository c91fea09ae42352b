package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"
)

// sendBody is the message of send mode.
var sendBody = []byte(`{"text":"hello world"}`)

// completed is what every successful blocking answer contains.
var completed = []byte(`"status":"completed"`)

// runSend runs c closed loops of blocking sends until -d or -max-requests.
func runSend(ctx context.Context, cfg config, client *http.Client) (result, error) {
	url, body, done := cfg.target+"/v1/agents/"+cfg.agent+"/messages", sendBody, completed
	switch {
	case cfg.baseline:
		url = cfg.target + "/send"
	case cfg.proto == "a2a":
		url, body, done = a2aURL(cfg), a2aSendBody, a2aCompleted
	case cfg.proto == "lg":
		url, body, done = cfg.target+"/lg/runs/wait", lgBody(cfg.agent, "hello world", ""), lgAnswered
	}
	ctx, cancel := context.WithTimeout(ctx, cfg.d)
	defer cancel()
	var (
		issued  atomic.Int64
		wg      sync.WaitGroup
		samples = make([][]time.Duration, cfg.c)
		errs    = make([]errorLog, cfg.c)
	)
	start := time.Now()
	for w := range cfg.c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 0, 4096)
			for issued.Add(1) <= cfg.maxRequests && ctx.Err() == nil {
				t0 := time.Now()
				var err error
				buf, err = sendOnce(ctx, client, url, body, done, cfg.proto == "a2a", buf[:0])
				if err != nil {
					if canceled(ctx) {
						return
					}
					errs[w].add(err)
					continue
				}
				samples[w] = append(samples[w], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := merge(samples)
	res := result{
		Mode: "send", Proto: protoName(cfg), Target: cfg.target, Baseline: cfg.baseline, Concurrency: cfg.c,
		ElapsedSec: elapsed.Seconds(), Requests: int64(len(all)),
		Throughput: float64(len(all)) / elapsed.Seconds(), Unit: "req/s",
	}
	res.mergeErrors(errs)
	res.Latency = summarise(all)
	return res, nil
}

// sendOnce posts body and reads the whole answer into buf; the answer
// must contain done (a completed run).
func sendOnce(ctx context.Context, client *http.Client, url string, body, done []byte, a2a bool, buf []byte) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return buf, err
	}
	req.Header.Set("Content-Type", "application/json")
	if a2a {
		req.Header.Set("A2A-Version", "1.0")
	}
	resp, err := client.Do(req)
	if err != nil {
		return buf, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return buf, errStatus(resp)
	}
	buf, err = readAllInto(resp.Body, buf)
	if err != nil {
		return buf, err
	}
	if !bytes.Contains(buf, done) {
		return buf, fmt.Errorf("answer is not a completed run: %.200s", buf)
	}
	return buf, nil
}

// readAllInto reads r to the end, reusing buf's storage.
func readAllInto(r io.Reader, buf []byte) ([]byte, error) {
	for {
		if len(buf) == cap(buf) {
			buf = append(buf, 0)[:len(buf)]
		}
		n, err := r.Read(buf[len(buf):cap(buf)])
		buf = buf[:len(buf)+n]
		if err == io.EOF {
			return buf, nil
		}
		if err != nil {
			return buf, err
		}
	}
}
