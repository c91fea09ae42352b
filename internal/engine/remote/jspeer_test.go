package remote_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"
	"github.com/a2aproject/a2a-go/v2/a2aclient/agentcard"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/errdefs"
	"agentd/internal/nodetest"
)

// jsPeer is interop/js/peer.mjs, an @a2a-js/sdk server, running as a
// child process on loopback.
type jsPeer struct{ base string }

// startJSPeer starts the JS peer; it skips only when node or the npm
// packages are missing and REQUIRE_INTEROP is unset (CI sets it).
func startJSPeer(t *testing.T) *jsPeer {
	t.Helper()
	node, dir := nodetest.Find(t, "@a2a-js/sdk")
	cmd := exec.Command(node, "peer.mjs")
	cmd.Dir = dir
	stdin, err := cmd.StdinPipe() // the peer stops when it closes
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = stdin.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	})
	line, err := bufio.NewReader(stdout).ReadString('\n')
	if err != nil {
		t.Fatalf("the JS peer did not start: %v", err)
	}
	go func() { _, _ = io.Copy(io.Discard, stdout) }()
	base, ok := strings.CutPrefix(strings.TrimSpace(line), "listening ")
	if !ok {
		t.Fatalf("the JS peer said %q", line)
	}
	return &jsPeer{base: base}
}

func (p *jsPeer) card() string { return p.base + "/.well-known/agent-card.json" }

// client is a2a-go's client on the JS peer, for checking its task.
func (p *jsPeer) client(t *testing.T) *a2aclient.Client {
	t.Helper()
	card, err := agentcard.DefaultResolver.Resolve(context.Background(), p.base)
	if err != nil {
		t.Fatal(err)
	}
	c, err := a2aclient.NewFromCard(context.Background(), card)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Destroy() })
	return c
}

// TestJSPeer drives an @a2a-js/sdk server through the remote engine:
// streaming, the input-required round trip, cancel, and the peer's
// failure.
func TestJSPeer(t *testing.T) {
	p := startJSPeer(t)

	t.Run("stream", func(t *testing.T) {
		h := enginetest.NewRecordingHost()
		out, err := newEngine(t, p.card()).Execute(ctxT(t), engine.Run{ID: "js-stream"}, h, boardWith("stream 30"))
		if err != nil {
			t.Fatal(err)
		}
		toks := tokensOf(h.Events())
		if len(toks) != 30 || strings.Fields(joined(toks))[29] != "tok30" {
			t.Fatalf("%d tokens %q, want tok1 … tok30 one by one", len(toks), joined(toks))
		}
		if got := lastAnswer(out); got != joined(toks) {
			t.Fatalf("answer %q", got)
		}
	})

	t.Run("input required round trip", func(t *testing.T) {
		h := enginetest.NewRecordingHost()
		h.AskUserFn = answerWith("Ada")
		out, err := newEngine(t, p.card()).Execute(ctxT(t), engine.Run{ID: "js-ask"}, h, boardWith("ask"))
		if err != nil {
			t.Fatal(err)
		}
		prompts := h.Prompts()
		if len(prompts) != 1 || prompts[0].Parts[0].Text != "What is your name?" {
			t.Fatalf("prompts %+v, want the peer's question", prompts)
		}
		if got := lastAnswer(out); got != "Hello, Ada" {
			t.Fatalf("answer %q, want the peer's answer to Ada", got)
		}
	})

	t.Run("cancel", func(t *testing.T) {
		h := enginetest.NewRecordingHost()
		done := make(chan error, 1)
		go func() {
			_, err := newEngine(t, p.card()).Execute(ctxT(t), engine.Run{ID: "js-cancel"}, h, boardWith("slow"))
			done <- err
		}()
		n := 0
		if _, err := h.WaitFor(ctxT(t), func(ev engine.Event) bool {
			if _, ok := ev.(engine.Token); ok {
				n++
			}
			return n >= 3
		}); err != nil {
			t.Fatal(err)
		}
		h.Fire(engine.Interrupt{Cause: engine.CauseUserCancel})
		if err := <-done; !errdefs.IsInterrupted(err) {
			t.Fatalf("Execute: %v, want interrupted", err)
		}
		cps := h.Checkpoints()
		task, err := p.client(t).GetTask(ctxT(t), &a2a.GetTaskRequest{ID: a2a.TaskID(taskIDOf(t, cps[len(cps)-1]))})
		if err != nil {
			t.Fatal(err)
		}
		if task.Status.State != a2a.TaskStateCanceled {
			t.Fatalf("the peer's task is %s, want canceled", task.Status.State)
		}
	})

	t.Run("peer failure", func(t *testing.T) {
		_, err := newEngine(t, p.card()).Execute(ctxT(t), engine.Run{ID: "js-fail"}, enginetest.NewRecordingHost(), boardWith("fail"))
		if err == nil || !strings.Contains(err.Error(), "the JS peer failed on purpose") || !errdefs.IsPublic(err) {
			t.Fatalf("Execute: %v, want the peer's reason, public", err)
		}
	})

	t.Run("peer gone", func(t *testing.T) {
		e := newEngine(t, "http://127.0.0.1:1/.well-known/agent-card.json")
		_, err := e.Execute(ctxT(t), engine.Run{ID: "js-gone"}, enginetest.NewRecordingHost(), boardWith("hi"))
		if !errdefs.IsNotAvailable(err) || errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Execute: %v, want peer unreachable", err)
		}
	})
}
