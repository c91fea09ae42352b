package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestAGUIReplicaKilledMidAnswer: an AG-UI stream on replica A is cut
// mid-answer by SIGKILLing A. The client resumes the same SSE on replica B
// with Last-Event-ID and gets exactly the rest (what it saw plus the rest
// is the run's whole stream, as B's connect replays it); and
// @ag-ui/client, reconnecting on B with the connect pattern, assembles
// messages equal to the run's transcript.
func TestAGUIReplicaKilledMidAnswer(t *testing.T) {
	skipShort(t)
	node, dir := nodeScript(t, "@ag-ui/client")
	dsn := sharedDSN(t)
	cfg := writeConfig(t, map[string]any{"lease_ttl": "2s"})
	a := startReplica(t, "A", dsn, cfg)
	b := startReplica(t, "B", dsn, cfg)
	c := newClient(t)
	ctx, cancel := context.WithTimeout(context.Background(), replicaTestTimeout)
	defer cancel()
	thread, runID := fmt.Sprintf("t-kill-%d", time.Now().UnixNano()), fmt.Sprintf("r-kill-%d", time.Now().UnixNano())

	seen := streamUntilKill(ctx, t, c, a, aguiInput(thread, runID, "stream 120 every 20ms"), killPoint())
	rest := readAGUI(t, doReq(ctx, t, c, http.MethodGet, b.base+"/ag-ui/agents/echo/threads/"+thread+"/runs/"+runID+"/events", "", "Last-Event-ID", seen[len(seen)-1].id))
	whole := readAGUI(t, doReq(ctx, t, c, http.MethodPost, b.base+"/ag-ui/agents/echo/connect", fmt.Sprintf(`{"threadId":%q,"runId":%q,"messages":[]}`, thread, runID)))
	if got, want := joinData(append(seen, rest...)), joinData(whole); got != want {
		t.Fatalf("seen on A + rest from B:\n%s\nwant the run's stream:\n%s", got, want)
	}
	if !strings.Contains(whole[len(whole)-1].data, `"success"`) {
		t.Fatalf("run ended with %s", whole[len(whole)-1].data)
	}
	if !strings.Contains(joinData(rest), `"resumed":"crash"`) {
		t.Errorf("no recovery attempt in the rest of the stream:\n%s", joinData(rest))
	}
	t.Logf("A killed after %d events; %d more from B", len(seen), len(rest))

	checkAssembled(ctx, t, c, node, dir, b, thread, runID)
}

// checkAssembled reconnects @ag-ui/client to the run on b with the connect
// pattern and checks the messages it assembles against the transcript.
func checkAssembled(ctx context.Context, t *testing.T, c *http.Client, node, dir string, b *replica, thread, runID string) {
	t.Helper()
	cmd := exec.CommandContext(ctx, node, "agui_connect.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "AGENTD_URL="+b.base, "AGENT=echo", "THREAD_ID="+thread, "RUN_ID="+runID, "SUPPRESS_TRANSFORMATION_WARNINGS=1")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node agui_connect.mjs: %v\n%s", err, out)
	}
	var assembled []struct{ Role, Content string }
	if err := json.Unmarshal(out, &assembled); err != nil {
		t.Fatalf("client messages %s: %v", out, err)
	}
	transcript := readJSON[struct {
		Messages []struct {
			Role  string `json:"role"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"messages"`
	}](t, doReq(ctx, t, c, http.MethodGet, b.base+"/v1/contexts/"+thread+"/messages", ""), http.StatusOK)
	var want []string
	for _, m := range transcript.Messages {
		var text strings.Builder
		for _, p := range m.Parts {
			text.WriteString(p.Text)
		}
		want = append(want, m.Role+": "+text.String())
	}
	var got []string
	for _, m := range assembled {
		got = append(got, m.Role+": "+m.Content)
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the client assembled:\n%s\nthe transcript:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// streamUntilKill posts an AG-UI run on r and reads its stream; after the
// strike-th TEXT_MESSAGE_CONTENT it SIGKILLs r, and returns the events
// that arrived whole.
func streamUntilKill(ctx context.Context, t *testing.T, c *http.Client, r *replica, body string, strike int) []aguiEvent {
	t.Helper()
	res := doReq(ctx, t, c, http.MethodPost, r.base+"/ag-ui/agents/echo", body)
	defer res.Body.Close()
	var out []aguiEvent
	contents := 0
	scanAGUI(t, res.Body, func(ev aguiEvent) {
		out = append(out, ev)
		if ev.typ == "TEXT_MESSAGE_CONTENT" {
			if contents++; contents == strike {
				r.signal(syscall.SIGKILL)
			}
		}
	})
	if contents < strike {
		t.Fatalf("the stream on %s ended after %d deltas, before the kill at %d", r.name, contents, strike)
	}
	_ = r.waitExit(t, testTimeout)
	return out
}

func doReq(ctx context.Context, t *testing.T, c *http.Client, method, url, body string, header ...string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(header); i += 2 {
		req.Header.Set(header[i], header[i+1])
	}
	res, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, url, err)
	}
	return res
}
