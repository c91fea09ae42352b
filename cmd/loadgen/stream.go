package main

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// streamStats is one worker's tally.
type streamStats struct {
	streams    int64
	deltas     int64
	firstDelta []time.Duration
	toSocket   []time.Duration
	errs       errorLog
}

// runStream runs c closed loops of streamed runs until -d or -max-requests.
// In latency mode the streams are paced and every delta's server timestamp
// is compared with its arrival.
func runStream(ctx context.Context, cfg config, client *http.Client) (result, error) {
	paced := cfg.mode == "latency"
	ctx, cancel := context.WithTimeout(ctx, cfg.d)
	defer cancel()
	var (
		issued atomic.Int64
		wg     sync.WaitGroup
		stats  = make([]streamStats, cfg.c)
	)
	start := time.Now()
	for w := range cfg.c {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st := &stats[w]
			br := bufio.NewReaderSize(nil, 32<<10)
			for issued.Add(1) <= cfg.maxRequests && ctx.Err() == nil {
				if err := streamOnce(ctx, cfg, client, br, paced, st); err != nil {
					if canceled(ctx) {
						return
					}
					st.errs.add(err)
					continue
				}
				st.streams++
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	res := result{
		Mode: cfg.mode, Proto: protoName(cfg), Target: cfg.target, Baseline: cfg.baseline, Concurrency: cfg.c,
		ElapsedSec: elapsed.Seconds(), Unit: "delta events/s",
	}
	firsts := make([][]time.Duration, cfg.c)
	socket := make([][]time.Duration, cfg.c)
	errs := make([]errorLog, cfg.c)
	for i := range stats {
		res.Requests += stats[i].streams
		res.Events += stats[i].deltas
		firsts[i], socket[i], errs[i] = stats[i].firstDelta, stats[i].toSocket, stats[i].errs
	}
	res.Throughput = float64(res.Events) / elapsed.Seconds()
	res.mergeErrors(errs)
	res.FirstDelta = summarise(merge(firsts))
	res.DeltaToSocket = summarise(merge(socket))
	return res, nil
}

// streamRequest builds the request that opens one stream of n tokens.
func streamRequest(ctx context.Context, cfg config, paced bool) (*http.Request, error) {
	if cfg.baseline {
		url := cfg.target + "/stream?n=" + strconv.Itoa(cfg.n)
		if paced {
			url += "&every=" + cfg.every.String()
		}
		return http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	}
	text := "stream " + strconv.Itoa(cfg.n)
	if paced {
		text += " every " + strconv.FormatInt(cfg.every.Milliseconds(), 10) + "ms"
	}
	if cfg.proto == "a2a" {
		return a2aRequest(ctx, cfg, a2aStreamBody(text))
	}
	body, url := `{"text":`+strconv.Quote(text)+`}`, cfg.target+"/v1/agents/"+cfg.agent+"/messages?stream=true"
	if cfg.proto == "lg" {
		body, url = string(lgBody(cfg.agent, text, "messages-tuple")), cfg.target+"/lg/runs/stream"
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, strings.NewReader(body))
	if err == nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, err
}

// streamOnce opens one stream and reads it to run.end, counting deltas into
// st as they arrive (so a stream cut by the deadline still counts).
func streamOnce(ctx context.Context, cfg config, client *http.Client, br *bufio.Reader, paced bool, st *streamStats) error {
	req, err := streamRequest(ctx, cfg, paced)
	if err != nil {
		return err
	}
	t0 := time.Now()
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return errStatus(resp)
	}
	br.Reset(resp.Body)
	sc := sseScanner{r: br}
	deltas := 0
	delta := "delta"
	if cfg.proto == "lg" {
		delta = "messages" // a token; the stream closes after the run's end
	}
	for {
		typ, data, err := sc.next()
		if err != nil {
			if errors.Is(err, io.EOF) && cfg.proto == "lg" && deltas == cfg.n {
				return nil
			}
			if errors.Is(err, io.EOF) {
				return fmt.Errorf("stream ended after %d deltas without run.end", deltas)
			}
			return err
		}
		now := time.Now()
		if cfg.proto == "a2a" {
			if typ = a2aEventType(data); typ == "error" {
				return fmt.Errorf("stream answered an error: %.200s", data)
			}
		}
		switch typ {
		case delta:
			deltas++
			st.deltas++
			if deltas == 1 {
				st.firstDelta = append(st.firstDelta, now.Sub(t0))
			}
			if paced {
				at, err := eventTime(data)
				if err != nil {
					return err
				}
				st.toSocket = append(st.toSocket, now.Sub(at))
			}
		case "run.end":
			if deltas != cfg.n {
				return fmt.Errorf("stream delivered %d deltas, want %d", deltas, cfg.n)
			}
			return nil
		}
	}
}

// sseScanner reads Server-Sent Events: it returns each event's type and
// data, skipping comments. The returned data is valid until the next call.
type sseScanner struct {
	r    *bufio.Reader
	typ  []byte
	data []byte
	long []byte
}

func (s *sseScanner) next() (string, []byte, error) {
	s.typ, s.data = s.typ[:0], s.data[:0]
	for {
		line, err := s.line()
		if err != nil {
			return "", nil, err
		}
		switch {
		case len(line) == 0:
			if len(s.typ) > 0 || len(s.data) > 0 {
				return eventType(s.typ), s.data, nil
			}
		case line[0] == ':':
		case bytes.HasPrefix(line, []byte("event:")):
			s.typ = append(s.typ[:0], bytes.TrimSpace(line[len("event:"):])...)
		case bytes.HasPrefix(line, []byte("data:")):
			if len(s.data) > 0 {
				s.data = append(s.data, '\n')
			}
			s.data = append(s.data, bytes.TrimPrefix(line[len("data:"):], []byte(" "))...)
		}
	}
}

// eventType avoids allocating for the event types loadgen counts.
func eventType(b []byte) string {
	switch string(b) {
	case "delta":
		return "delta"
	case "messages":
		return "messages"
	case "run.end":
		return "run.end"
	}
	return string(b)
}

// line returns the next line without its line ending.
func (s *sseScanner) line() ([]byte, error) {
	line, err := s.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		s.long = append(s.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = s.r.ReadSlice('\n')
			s.long = append(s.long, line...)
		}
		line = s.long
	}
	if err != nil {
		if errors.Is(err, io.EOF) && len(line) > 0 {
			return bytes.TrimRight(line, "\r\n"), nil
		}
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

// timeKey introduces the server's timestamp in an event's data.
var timeKey = []byte(`"time":"`)

// eventTime extracts data.time (RFC 3339 with nanoseconds).
func eventTime(data []byte) (time.Time, error) {
	i := bytes.Index(data, timeKey)
	if i < 0 {
		return time.Time{}, fmt.Errorf("delta without a time: %.200s", data)
	}
	rest := data[i+len(timeKey):]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return time.Time{}, fmt.Errorf("delta with an unterminated time: %.200s", data)
	}
	return time.Parse(time.RFC3339Nano, string(rest[:j]))
}
