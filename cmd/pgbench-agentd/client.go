package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// event is one SSE event as the client saw it.
type event struct {
	seq     int64
	typ     string
	data    []byte
	arrived time.Time
}

// stamp is the time the server logged the event (its data.time).
func (e event) stamp() time.Time {
	var d struct {
		Time time.Time `json:"time"`
	}
	_ = json.Unmarshal(e.data, &d)
	return d.Time
}

// attempt is the attempt number of a run.start event.
func (e event) attempt() int {
	var d struct {
		Attempt int `json:"attempt"`
	}
	_ = json.Unmarshal(e.data, &d)
	return d.Attempt
}

// submit starts an echo run with text and returns its id; wait blocks until
// the run has ended.
func submit(ctx context.Context, c *http.Client, base, text string, wait bool) (string, error) {
	body, _ := json.Marshal(map[string]string{"text": text})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost,
		base+"/v1/agents/echo/messages?wait="+strconv.FormatBool(wait), bytes.NewReader(body))
	if err != nil {
		return "", err
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := c.Do(req)
	if err != nil {
		return "", err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return "", err
	}
	if res.StatusCode != http.StatusOK && res.StatusCode != http.StatusAccepted {
		return "", fmt.Errorf("POST messages: status %d: %s", res.StatusCode, b)
	}
	var v struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return "", err
	}
	if wait && v.Status != "completed" {
		return "", fmt.Errorf("run %s ended %s", v.ID, v.Status)
	}
	return v.ID, nil
}

// subscription is an open GET /v1/runs/{id}/events.
type subscription struct {
	res       *http.Response
	br        *bufio.Reader
	opened    time.Time // the request was sent
	firstByte time.Time // the first byte of the body arrived
}

// subscribe opens a run's event stream after seq after.
func subscribe(ctx context.Context, c *http.Client, base, runID string, after int64) (*subscription, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, base+"/v1/runs/"+runID+"/events", nil)
	if err != nil {
		return nil, err
	}
	if after > 0 {
		req.Header.Set("Last-Event-ID", strconv.FormatInt(after, 10))
	}
	s := &subscription{opened: time.Now()}
	res, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		return nil, fmt.Errorf("GET events: status %d", res.StatusCode)
	}
	s.res, s.br = res, bufio.NewReaderSize(res.Body, 64<<10)
	if _, err := s.br.Peek(1); err != nil {
		res.Body.Close()
		return nil, err
	}
	s.firstByte = time.Now()
	return s, nil
}

// next reads the next event; io.EOF means the stream closed between
// events.
func (s *subscription) next() (event, error) {
	var ev event
	var data []byte
	for {
		line, err := s.br.ReadSlice('\n')
		if err != nil {
			if errors.Is(err, io.EOF) && len(line) == 0 && ev.typ == "" {
				return ev, io.EOF
			}
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return ev, err
		}
		text := strings.TrimSuffix(string(line), "\n")
		switch {
		case text == "" && ev.typ == "":
		case text == "":
			ev.data, ev.arrived = data, time.Now()
			return ev, nil
		case strings.HasPrefix(text, ":"):
		case strings.HasPrefix(text, "id: "):
			ev.seq, _ = strconv.ParseInt(text[4:], 10, 64)
		case strings.HasPrefix(text, "event: "):
			ev.typ = text[7:]
		case strings.HasPrefix(text, "data: "):
			data = []byte(text[6:])
		}
	}
}

func (s *subscription) close() { s.res.Body.Close() }

// ended reports whether a run.end event ends the run.
func ended(ev event) bool {
	if ev.typ != "run.end" {
		return false
	}
	var d struct {
		State string `json:"state"`
	}
	_ = json.Unmarshal(ev.data, &d)
	switch d.State {
	case "completed", "failed", "canceled", "rejected":
		return true
	}
	return false
}
