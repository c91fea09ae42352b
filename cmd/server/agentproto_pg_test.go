package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAgentProtoJoinAfterReplicaKilled: a runs.stream on replica A is cut
// by A's SIGKILL; B takes the run over and joinStream on B with the last
// event id A delivered completes the stream with every frame once — the
// frames of A then B are exactly those of a full join, in order.
func TestAgentProtoJoinAfterReplicaKilled(t *testing.T) {
	skipShort(t)
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	before, join, lastID := streamUntilKilled(ctx, t, c, a)
	res := lgDo(ctx, t, c, http.MethodGet, b.base+"/lg"+join, "", lastID)
	after, err := readFrames(res.Body, nil)
	res.Body.Close()
	if err != nil {
		t.Fatalf("join on B: %v", err)
	}
	res = lgDo(ctx, t, c, http.MethodGet, b.base+"/lg"+join, "", "")
	full, err := readFrames(res.Body, nil)
	res.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	got, want := frameIDs(append(before, after...)), frameIDs(full)
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("frames of A then B:\n%v\nfull join:\n%v", got, want)
	}
	var final struct {
		Messages []struct {
			Content string `json:"content"`
		} `json:"messages"`
	}
	_ = json.Unmarshal(after[len(after)-1].data, &final)
	if n := len(final.Messages); after[len(after)-1].event != "values" || n != 2 || !strings.HasSuffix(final.Messages[1].Content, "tok80") {
		t.Fatalf("last frame %s %s, want the final values", after[len(after)-1].event, after[len(after)-1].data)
	}
	t.Logf("%d frames on A before the kill, %d on B after it", len(before), len(after))
}

// lgDo makes one request, with Last-Event-ID when lastID is set, and
// fails the test unless it answers 200.
func lgDo(ctx context.Context, t *testing.T, c *http.Client, method, url, body, lastID string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	if res.StatusCode != http.StatusOK {
		res.Body.Close()
		t.Fatalf("%s %s: status %d", method, url, res.StatusCode)
	}
	return res
}

// frameIDs are the ids of the frames that have one, in order.
func frameIDs(fs []lgFrame) []string {
	var out []string
	for _, f := range fs {
		if f.id != "" {
			out = append(out, f.id)
		}
	}
	return out
}

// streamUntilKilled starts a runs.stream of a long echo on a and SIGKILLs
// a after a random number of tokens; it returns the frames a delivered,
// the run's join path (the Location header) and the last frame id.
func streamUntilKilled(ctx context.Context, t *testing.T, c *http.Client, a *replica) (before []lgFrame, join, lastID string) {
	t.Helper()
	var th struct {
		ThreadID string `json:"thread_id"`
	}
	res := lgDo(ctx, t, c, http.MethodPost, a.base+"/lg/threads", `{}`, "")
	if err := json.NewDecoder(res.Body).Decode(&th); err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	res = lgDo(ctx, t, c, http.MethodPost, a.base+"/lg/threads/"+th.ThreadID+"/runs/stream",
		`{"assistant_id":"echo","input":{"messages":[{"role":"user","content":"stream 80 every 25ms"}]},"stream_mode":["messages-tuple","updates","values"]}`, "")
	join = res.Header.Get("Location")
	strike := killPoint()
	before, _ = readFrames(res.Body, func(f lgFrame) bool {
		if f.event == "messages" {
			if strike--; strike == 0 {
				a.signal(syscall.SIGKILL)
			}
		}
		return true
	})
	res.Body.Close()
	_ = a.waitExit(t, testTimeout)
	for _, f := range before {
		if f.id != "" {
			lastID = f.id
		}
	}
	if lastID == "" || !strings.HasSuffix(join, "/stream") {
		t.Fatalf("before the kill: %d frames, last id %q, Location %q", len(before), lastID, join)
	}
	return before, join, lastID
}
