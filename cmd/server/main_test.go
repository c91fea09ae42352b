package main

// End-to-end tests of the server command: run() serves the demo
// configuration on loopback and the README flows work as written over real
// HTTP; a canceled context drains and returns.

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestReadmeFlows walks the README's curl examples against the real
// server.
func TestReadmeFlows(t *testing.T) {
	s := start(t)

	t.Run("echo", func(t *testing.T) {
		res := s.post(t, "/v1/agents/echo/messages", `{"text": "hello there"}`)
		loc := res.Header.Get("Location")
		v := readJSON[runJSON](t, res, http.StatusOK)
		if v.Status != "completed" || v.AgentID != "echo" || loc != "/v1/runs/"+v.ID {
			t.Fatalf("run %+v, Location %q", v, loc)
		}
		last := v.Messages[len(v.Messages)-1]
		if last.Role != "assistant" || len(last.Parts) != 1 || last.Parts[0].Text != "hello there" {
			t.Errorf("last message %+v, want the echo", last)
		}
	})

	t.Run("stream", func(t *testing.T) {
		res := s.post(t, "/v1/agents/echo/messages?stream=true", `{"text":"stream 20 every 50ms"}`)
		defer res.Body.Close()
		if ct := res.Header.Get("Content-Type"); ct != "text/event-stream" {
			t.Fatalf("Content-Type %q", ct)
		}
		evs := readUntilEnd(t, bufio.NewReader(res.Body))
		checkSeqs(t, evs)
		if got := deltas(evs); !slices.Equal(got, toks(20)) {
			t.Errorf("tokens %v", got)
		}
		n := 0
		for _, ev := range evs {
			if ev.typ == "delta" {
				n++
			}
		}
		if n != 20 {
			t.Errorf("%d delta events, want 20", n)
		}
	})

	for _, resume := range []string{"Last-Event-ID", "after"} {
		t.Run("resume with "+resume, func(t *testing.T) {
			res := s.post(t, "/v1/agents/echo/messages?stream=true", `{"text":"stream 20 every 50ms"}`)
			br := bufio.NewReader(res.Body)
			var got []event
			for len(got) < 8 {
				ev, err := readEvent(br)
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, ev)
			}
			res.Body.Close() // drop the connection midway
			id, _ := got[0].data["run_id"].(string)
			last := strconv.FormatInt(got[len(got)-1].seq, 10)
			var again *http.Response
			if resume == "after" {
				again = s.get(t, "/v1/runs/"+id+"/events?after="+last)
			} else {
				again = s.get(t, "/v1/runs/"+id+"/events", "Last-Event-ID", last)
			}
			defer again.Body.Close()
			if again.StatusCode != http.StatusOK {
				t.Fatalf("resume: status %d", again.StatusCode)
			}
			got = append(got, readUntilEnd(t, bufio.NewReader(again.Body))...)
			checkSeqs(t, got)
			if got := deltas(got); !slices.Equal(got, toks(20)) {
				t.Errorf("tokens %v", got)
			}
		})
	}

	t.Run("assistant uses the clock", func(t *testing.T) {
		v := readJSON[runJSON](t, s.post(t, "/v1/agents/assistant/messages", `{"text":"what time is it?"}`), http.StatusOK)
		if v.Status != "completed" {
			t.Fatalf("status %s", v.Status)
		}
		var call, result, answer bool
		for _, m := range v.Messages {
			for _, p := range m.Parts {
				switch {
				case p.Type == "tool_call" && strings.Contains(string(p.ToolCall), `"clock"`):
					call = true
				case p.Type == "tool_result" && call:
					result = true
				case p.Type == "text" && m.Role == "assistant" && result && strings.HasPrefix(p.Text, "It is "):
					answer = true
				}
			}
		}
		if !call || !result || !answer {
			t.Errorf("tool call %v, tool result %v, final answer %v: %+v", call, result, answer, v.Messages)
		}
	})

	t.Run("assistant calculates", func(t *testing.T) {
		v := readJSON[runJSON](t, s.post(t, "/v1/agents/assistant/messages", `{"text": "calculate 2*(3+4)"}`), http.StatusOK)
		last := v.Messages[len(v.Messages)-1]
		if v.Status != "completed" || last.Role != "assistant" || !strings.Contains(last.Parts[0].Text, "14") {
			t.Errorf("run %s answered %+v", v.Status, last)
		}
	})

	t.Run("wait=false", func(t *testing.T) {
		res := s.post(t, "/v1/agents/echo/messages?wait=false", `{"text":"stream 5 every 10ms"}`)
		loc := res.Header.Get("Location")
		v := readJSON[runJSON](t, res, http.StatusAccepted)
		if loc != "/v1/runs/"+v.ID || v.ID == "" {
			t.Fatalf("Location %q for run %q", loc, v.ID)
		}
		// The run finishes on its own; its event stream ends with run.end.
		ev := s.get(t, loc+"/events")
		defer ev.Body.Close()
		readUntilEnd(t, bufio.NewReader(ev.Body))
		if got := readJSON[runJSON](t, s.get(t, loc), http.StatusOK); got.Status != "completed" {
			t.Errorf("status %s", got.Status)
		}
	})

	t.Run("probes", func(t *testing.T) {
		for _, p := range []string{"/healthz", "/readyz"} {
			res := s.get(t, p)
			res.Body.Close()
			if res.StatusCode != http.StatusOK {
				t.Errorf("%s: %d", p, res.StatusCode)
			}
		}
		res := s.get(t, "/openapi.yaml")
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		if !bytes.Contains(b, []byte("openapi:")) {
			t.Errorf("/openapi.yaml serves %.60q", b)
		}
		res = s.get(t, "/no/such/path")
		res.Body.Close()
		if res.StatusCode != http.StatusNotFound || res.Header.Get("Content-Type") != "application/problem+json" {
			t.Errorf("unknown path: %d %s", res.StatusCode, res.Header.Get("Content-Type"))
		}
	})
}

// TestGracefulShutdown cancels run's context while a stream is open: the
// drain lets the run finish, the stream closes after run.end, and run
// returns nil.
func TestGracefulShutdown(t *testing.T) {
	s := start(t, "--shutdown-timeout", "10s")
	res := s.post(t, "/v1/agents/echo/messages?stream=true", `{"text":"stream 50 every 20ms"}`)
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	first, err := readEvent(br)
	if err != nil {
		t.Fatal(err)
	}
	s.stop()
	rest, errc := []event{first}, make(chan error, 1)
	go func() {
		for {
			ev, err := readEvent(br)
			if err != nil {
				if errors.Is(err, io.EOF) {
					err = nil
				}
				errc <- err
				return
			}
			rest = append(rest, ev)
		}
	}()
	if err := s.wait(); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	select {
	case err := <-errc:
		if err != nil {
			t.Fatalf("stream: %v", err)
		}
	case <-time.After(testTimeout):
		t.Fatal("the stream stayed open after run returned")
	}
	checkSeqs(t, rest)
	if got := deltas(rest); len(got) != 50 {
		t.Errorf("the drain cut the run short: %d tokens, want 50", len(got))
	}
	if st := rest[len(rest)-1].data["state"]; st != "completed" {
		t.Errorf("run.end state %v", st)
	}
}

// TestShutdownEndsSilentStreams cancels run's context while a stream of a
// run that never ends is open: run still returns (after the drain timeout)
// and the stream closes.
func TestShutdownEndsSilentStreams(t *testing.T) {
	s := start(t, "--shutdown-timeout", "200ms")
	res := s.post(t, "/v1/agents/conformance/messages?stream=true", `{"text":"tck-cancel"}`)
	defer res.Body.Close()
	br := bufio.NewReader(res.Body)
	if _, err := readEvent(br); err != nil {
		t.Fatal(err)
	}
	s.stop()
	if err := s.wait(); err != nil {
		t.Fatalf("run after cancel: %v", err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, _ = io.Copy(io.Discard, br)
	}()
	select {
	case <-done:
	case <-time.After(testTimeout):
		t.Fatal("the stream stayed open after run returned")
	}
}
