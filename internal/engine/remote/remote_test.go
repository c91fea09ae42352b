package remote_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	agenta2a "agentd/internal/a2a"
	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/remote"
	"agentd/internal/errdefs"
)

func TestEngineContract(t *testing.T) {
	p := newPeer(t)
	enginetest.RunSuite(t, func(testing.TB) enginetest.Case {
		return enginetest.Case{
			Engine: newEngine(t, p.cardURL("conformance")),
			Succeed: func() enginetest.Input {
				return enginetest.Input{Board: boardWith("tck-input-required"), AskUser: answerWith("42")}
			},
			Fail:  func() enginetest.Input { return enginetest.Input{Board: boardWith("tck-task-failure")} },
			Block: func() enginetest.Input { return enginetest.Input{Board: boardWith("tck-cancel")} },
		}
	})
}

func TestExtensionMatchesTheA2AFace(t *testing.T) {
	if remote.ExtensionURI != agenta2a.ExtensionURI || remote.MetaSeq != agenta2a.MetaSeq || remote.LastEventIDHeader != agenta2a.LastEventIDHeader {
		t.Fatal("remote's copy of the resumable-stream extension differs from internal/a2a's")
	}
}

func wantText(n int) string {
	words := make([]string, n)
	for i := range words {
		words[i] = fmt.Sprintf("tok%d", i+1)
	}
	return strings.Join(words, " ")
}

func TestStreamsThePeersTokens(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("echo"))
	h := enginetest.NewRecordingHost()
	b, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, h, boardWith("stream 40"))
	if err != nil {
		t.Fatal(err)
	}
	toks := tokens(t, h, "r1")
	if got := joined(toks); got != wantText(40) {
		t.Fatalf("tokens %q", got)
	}
	if len(toks) < 2 {
		t.Fatalf("the answer came as %d delta(s), want it streamed", len(toks))
	}
	if got := lastAnswer(b); got != wantText(40) {
		t.Fatalf("answer %q", got)
	}
}

func TestInputRequiredRoundTrip(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("conformance"))
	h := enginetest.NewRecordingHost()
	h.AskUserFn = answerWith("forty-two")
	b, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, h, boardWith("tck-input-required"))
	if err != nil {
		t.Fatal(err)
	}
	prompts := h.Prompts()
	if len(prompts) != 1 || !strings.Contains(prompts[0].Parts[0].Text, "Please provide more input") {
		t.Fatalf("prompts %+v", prompts)
	}
	if got := lastAnswer(b); got != "Received: forty-two" {
		t.Fatalf("answer %q", got)
	}
}

// TestInputRequiredParks is the runtime's way: AskUser parks the run (an
// interrupt), and the attempt resumed from the checkpoint gets the answer
// from the same call and sends it to the same peer task.
func TestInputRequiredParks(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("conformance"))
	h := enginetest.NewRecordingHost()
	park := engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
	h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) { return engine.UserReply{}, park }
	_, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, h, boardWith("tck-input-required"))
	if !errdefs.IsInterrupted(err) {
		t.Fatalf("first attempt: %v, want parked", err)
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]
	if last.Step != "peer:ask" {
		t.Fatalf("last checkpoint at %q", last.Step)
	}
	h2 := enginetest.NewRecordingHost()
	h2.AskUserFn = answerWith("yes")
	b, err := e.Execute(ctxT(t), engine.Run{ID: "r1", ResumeFrom: &last}, h2, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got := lastAnswer(b); got != "Received: yes" {
		t.Fatalf("answer %q", got)
	}
}

func TestCancelIsForwarded(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("conformance"))
	h := enginetest.NewRecordingHost()
	ctx := ctxT(t)
	done := make(chan error, 1)
	go func() {
		_, err := e.Execute(ctx, engine.Run{ID: "r1"}, h, boardWith("tck-cancel"))
		done <- err
	}()
	taskID := waitTaskID(t, h)
	h.Fire(engine.Interrupt{Cause: engine.CauseUserCancel})
	if err := <-done; !errdefs.IsInterrupted(err) {
		t.Fatalf("Execute: %v, want interrupted", err)
	}
	c := peerClient(t, p, "conformance")
	task, err := c.GetTask(ctx, &a2a.GetTaskRequest{ID: a2a.TaskID(taskID)})
	if err != nil {
		t.Fatal(err)
	}
	if task.Status.State != a2a.TaskStateCanceled {
		t.Fatalf("peer task %s", task.Status.State)
	}
}

func TestPeerFailures(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("conformance"))
	for _, c := range []struct {
		text  string
		class errdefs.Class
		says  string
	}{
		{"tck-task-failure", errdefs.ClassInternal, "simulated failure"},
		{"tck-reject-task", errdefs.ClassValidation, "rejected"},
	} {
		_, err := e.Execute(ctxT(t), engine.Run{ID: "r-" + c.text}, enginetest.NewRecordingHost(), boardWith(c.text))
		if errdefs.ClassOf(err) != c.class || !strings.Contains(err.Error(), c.says) || !errdefs.IsPublic(err) {
			t.Errorf("%s: %v (class %s, public %v), want class %s saying %q", c.text, err, errdefs.ClassOf(err), errdefs.IsPublic(err), c.class, c.says)
		}
	}
}

func TestUnreachablePeerFailsFast(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	e := newEngine(t, "http://"+addr+"/.well-known/agent-card.json", func(c *remote.Config) { c.BreakerFailures = 2 })
	for i := range 3 {
		_, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, enginetest.NewRecordingHost(), boardWith("hi"))
		if !errdefs.IsNotAvailable(err) || !errdefs.IsPublic(err) {
			t.Fatalf("call %d: %v, want a public NotAvailable", i, err)
		}
		if open := strings.Contains(err.Error(), "circuit open"); open != (i == 2) {
			t.Fatalf("call %d: %v (circuit open: %v)", i, err, open)
		}
	}
}

func TestPrivatePeerRefused(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("echo"), func(c *remote.Config) { c.AllowPrivate = false })
	_, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, enginetest.NewRecordingHost(), boardWith("hi"))
	if !errdefs.IsForbidden(err) {
		t.Fatalf("%v, want forbidden", err)
	}
}

func TestResponseSizeCapped(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("echo"), func(c *remote.Config) { c.MaxResponseBytes = 64 })
	_, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, enginetest.NewRecordingHost(), boardWith("hi"))
	if err == nil || !strings.Contains(err.Error(), "exceeds 64 bytes") {
		t.Fatalf("%v, want the cap named", err)
	}
}

// cutHost cuts the attempt (cancels its context) after n checkpoints
// that recorded answer text, and remembers how many events were published
// before the last checkpoint: what a host's durable log holds.
type cutHost struct {
	*enginetest.RecordingHost
	n      int
	cancel context.CancelFunc

	mu      sync.Mutex
	seen    int
	durable int
	last    engine.Checkpoint
}

func (h *cutHost) Checkpoint(ctx context.Context, cp engine.Checkpoint) error {
	if err := h.RecordingHost.Checkpoint(ctx, cp); err != nil {
		return err
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.durable, h.last = len(h.Events()), cp
	if strings.Contains(string(cp.Payload), `"text"`) {
		if h.seen++; h.seen == h.n {
			h.cancel()
		}
	}
	return nil
}

// TestReattachAfterCut cuts an attempt mid-stream and resumes from its
// last checkpoint: the resumed attempt re-attaches to the same peer task
// and every peer token is in the local log exactly once.
//
// Without cursors (a card that does not declare agentd's extension) the
// resumed attempt forwards what the peer's Task holds beyond the
// checkpointed text: the text is still complete and undoubled.
func TestReattachAfterCut(t *testing.T) {
	p := newPeer(t)
	for _, cursors := range []bool{true, false} {
		card := p.cardURL("echo")
		if !cursors {
			card = hideExtension(t, card)
		}
		e := newEngine(t, card)
		for _, c := range []struct {
			cut  int
			late bool // resume after the peer task completed
		}{{1, false}, {7, false}, {15, false}, {7, true}} {
			cut := c.cut
			t.Run(fmt.Sprintf("cursors=%v/cut=%d/late=%v", cursors, cut, c.late), func(t *testing.T) {
				ctx, cancel := context.WithCancel(ctxT(t))
				h := &cutHost{RecordingHost: enginetest.NewRecordingHost(), n: cut, cancel: cancel}
				_, err := e.Execute(ctx, engine.Run{ID: "r1"}, h, boardWith("stream 20 every 10ms"))
				if !errors.Is(err, context.Canceled) {
					t.Fatalf("cut attempt: %v", err)
				}
				h.mu.Lock()
				log, last := h.Events()[:h.durable], h.last
				h.mu.Unlock()
				if c.late {
					peerTasks := peerClient(t, p, "echo")
					eventually(t, "the peer task completes", func() bool {
						task, err := peerTasks.GetTask(ctxT(t), &a2a.GetTaskRequest{ID: a2a.TaskID(taskIDOf(t, last))})
						return err == nil && task.Status.State == a2a.TaskStateCompleted
					})
				}
				h2 := enginetest.NewRecordingHost()
				b, err := e.Execute(ctxT(t), engine.Run{ID: "r1", ResumeFrom: &last}, h2, nil)
				if err != nil {
					t.Fatal(err)
				}
				first := tokensOf(log)
				t.Logf("%d tokens before the cut", len(first))
				all := append(first, tokens(t, h2, "r1")...)
				if got := joined(all); got != wantText(20) {
					t.Fatalf("log after the cut at %d tokens (%d before it): %q", cut, len(first), got)
				}
				if got := lastAnswer(b); got != wantText(20) {
					t.Fatalf("answer %q", got)
				}
				if strings.Contains(string(last.Payload), `"seq"`) != cursors {
					t.Fatalf("checkpoint %s", last.Payload)
				}
			})
		}
	}
}

// hideExtension serves the card at cardURL without agentd's extension.
func hideExtension(t *testing.T, cardURL string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := http.Get(cardURL)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(bytes.ReplaceAll(b, []byte(remote.ExtensionURI), []byte("urn:example:hidden")))
	}))
	t.Cleanup(srv.Close)
	return srv.URL + "/.well-known/agent-card.json"
}

func waitTaskID(t *testing.T, h *enginetest.RecordingHost) string {
	t.Helper()
	deadline := time.Now().Add(testTimeout)
	for time.Now().Before(deadline) {
		if cps := h.Checkpoints(); len(cps) > 0 {
			if st := cps[0].Payload; len(st) > 0 {
				return taskIDOf(t, cps[0])
			}
		}
		time.Sleep(5 * time.Millisecond)
	}
	t.Fatal("no checkpoint named the peer task")
	return ""
}

func peerClient(t *testing.T, p *peerServer, id string) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(ctxT(t), p.srv.URL+"/agents/"+id)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(ctxT(t), card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestDeadPeerOpensTheCircuit: a peer that dies after its card was cached
// still opens the circuit (the cached card is no sign of life).
func TestDeadPeerOpensTheCircuit(t *testing.T) {
	p := newPeer(t)
	e := newEngine(t, p.cardURL("echo"), func(c *remote.Config) { c.BreakerFailures = 2 })
	if _, err := e.Execute(ctxT(t), engine.Run{ID: "r0"}, enginetest.NewRecordingHost(), boardWith("hi")); err != nil {
		t.Fatal(err)
	}
	p.srv.CloseClientConnections()
	p.srv.Close()
	for i := range 3 {
		_, err := e.Execute(ctxT(t), engine.Run{ID: "r1"}, enginetest.NewRecordingHost(), boardWith("hi"))
		if !errdefs.IsNotAvailable(err) {
			t.Fatalf("call %d: %v, want NotAvailable", i, err)
		}
		if open := strings.Contains(err.Error(), "circuit open"); open != (i == 2) {
			t.Fatalf("call %d: %v (circuit open: %v)", i, err, open)
		}
	}
}
