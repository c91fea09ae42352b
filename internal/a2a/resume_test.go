package a2a_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strconv"
	"testing"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"
	"github.com/a2aproject/a2a-go/v2/a2aclient"

	agenta2a "agentd/internal/a2a"
)

// TestResumeAtRandomCuts drops a2a-go clients' streams at random points
// and resubscribes with the last seq received: the stitched updates must be
// exactly the updates of an unbroken replay, each once, in order.
func TestResumeAtRandomCuts(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	e := newEnv(t)
	for _, b := range bindings {
		for i, prompt := range []string{"stream 40", "stream 25 every 2ms", "stream 60"} {
			cuts := rng.Uint64()
			t.Run(fmt.Sprintf("%s/%d", b.name, i), func(t *testing.T) {
				t.Parallel()
				c := e.client(t, "echo", b)
				stitched, taskID := stitch(t, c, prompt, rand.New(rand.NewPCG(cuts, 1)))
				ref := replay(t, c, taskID, 0)
				if len(stitched) != len(ref) {
					t.Fatalf("stitched %d updates, reference %d:\n%v\n%v", len(stitched), len(ref), stitched, ref)
				}
				for j := range ref {
					if stitched[j] != ref[j] {
						t.Fatalf("update %d: stitched %q, reference %q", j, stitched[j], ref[j])
					}
				}
			})
		}
	}
}

// stitch streams prompt, cutting the stream after a random number of
// updates and resubscribing after the last seq seen, until the task ends.
func stitch(t *testing.T, c *a2aclient.Client, prompt string, rng *rand.Rand) ([]string, a2a.TaskID) {
	var out []string
	var taskID a2a.TaskID
	var last int64
	open := func(ctx context.Context) func(func(a2a.Event, error) bool) {
		if taskID == "" {
			return c.SendStreamingMessage(ctx, sendReq(prompt))
		}
		ctx = a2aclient.AttachServiceParams(ctx, a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {strconv.FormatInt(last, 10)}})
		return c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: taskID})
	}
	for round := 0; ; round++ {
		if round > 200 {
			t.Fatal("the stream never ended")
		}
		ctx, cancel := context.WithCancel(ctxT(t))
		budget := 1 + rng.IntN(12)
		ended := true
		first := true
		for ev, err := range open(ctx) {
			if err != nil {
				cancel()
				t.Fatalf("round %d: %v", round, err)
			}
			if task, ok := ev.(*a2a.Task); ok {
				if !first {
					t.Fatalf("round %d: a Task in the middle of the stream", round)
				}
				taskID = task.ID
			} else {
				s := seqOf(ev)
				if s <= last {
					t.Fatalf("round %d: seq %d after %d", round, s, last)
				}
				last = s
				out = append(out, describe(ev))
			}
			first = false
			if budget--; budget == 0 {
				ended = false
				break
			}
		}
		cancel()
		if ended {
			t.Logf("%d rounds, %d updates", round+1, len(out))
			return out, taskID
		}
	}
}

// replay subscribes after seq `after` to a task and returns its updates.
func replay(t *testing.T, c *a2aclient.Client, id a2a.TaskID, after int64) []string {
	ctx := a2aclient.AttachServiceParams(ctxT(t), a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {strconv.FormatInt(after, 10)}})
	var out []string
	for _, ev := range collect(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}))[1:] {
		out = append(out, describe(ev))
	}
	return out
}

// describe renders an update with everything a resumed stream must repeat
// exactly.
func describe(ev a2a.Event) string {
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		return fmt.Sprintf("%d status %s", seqOf(ev), v.Status.State)
	case *a2a.TaskArtifactUpdateEvent:
		text := ""
		for _, p := range v.Artifact.Parts {
			text += p.Text()
		}
		return fmt.Sprintf("%d artifact %s append=%v last=%v %q", seqOf(ev), v.Artifact.ID, v.Append, v.LastChunk, text)
	}
	return fmt.Sprintf("%T", ev)
}

// TestResumeReportsGap prunes a finished run's log and resumes before the
// pruned point: the stream says so before the surviving events.
func TestResumeReportsGap(t *testing.T) {
	e := newEnv(t)
	c := e.client(t, "echo", bindings[0])
	evs := collect(t, c.SendStreamingMessage(ctxT(t), sendReq("stream 10")))
	id := evs[0].(*a2a.Task).ID
	if err := e.st.PruneEvents(ctxT(t), string(id), 6); err != nil {
		t.Fatal(err)
	}
	ctx := a2aclient.AttachServiceParams(ctxT(t), a2aclient.ServiceParams{agenta2a.LastEventIDHeader: {"2"}})
	got := collect(t, c.SubscribeToTask(ctx, &a2a.SubscribeToTaskRequest{ID: id}))
	gap, ok := got[1].(*a2a.TaskStatusUpdateEvent)
	if !ok || gap.Metadata[agenta2a.MetaGap] == nil {
		t.Fatalf("second event %T %+v, want the gap marker", got[1], got[1])
	}
	if p := gap.Metadata[agenta2a.MetaGap].(map[string]any)["prunedThrough"]; p != float64(6) {
		t.Fatalf("prunedThrough %v", p)
	}
	if s := seqOf(got[2]); s != 7 {
		t.Fatalf("first event after the gap has seq %d, want 7", s)
	}
}
