package flow_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
	"agentd/internal/engine/flow"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// randomSpec writes a random flow of text, input and action nodes with
// random routes (some conditional, some to rollback, some missing).
func randomSpec(r *rand.Rand) *flow.Spec {
	n := 2 + r.IntN(7)
	id := func(i int) string {
		if i == 0 {
			return "start"
		}
		return fmt.Sprintf("n%d", i)
	}
	target := func() string {
		switch r.IntN(8) {
		case 0:
			return ""
		case 1:
			return flow.Rollback
		}
		return id(r.IntN(n))
	}
	s := &flow.Spec{Name: "random"}
	for i := range n {
		node := flow.Node{ID: id(i), Content: "node " + id(i)}
		switch r.IntN(3) {
		case 1:
			node.Wait = true
			node.SaveTo = "ans"
		case 2:
			node.Do = &flow.Call{Name: []string{"ping", "rent_car", "reserve_hotel"}[r.IntN(3)]}
			if r.IntN(2) == 0 {
				node.Undo = &flow.Call{Name: []string{"cancel_hotel", "rent_car"}[r.IntN(2)]}
			}
			if r.IntN(3) == 0 {
				node.OnError = target()
			}
		}
		for range r.IntN(3) {
			node.Transitions = append(node.Transitions, flow.Transition{Condition: fmt.Sprintf("input == '%c'", 'a'+r.IntN(3)), To: id(r.IntN(n))})
		}
		if r.IntN(3) > 0 {
			node.To = target()
		}
		s.Nodes = append(s.Nodes, node)
	}
	return s
}

// Whatever the flow, a run either reaches an end or reports why: Compile
// refuses it with its problems, or Execute returns — completed, parked
// for input, or failed with an error naming a node — within its budget,
// and a completed run's last checkpoint is the flow's end.
func TestEveryFlowEndsOrSaysWhy(t *testing.T) {
	reg := registry(t, &effects{}, "rent_car")
	known := func(n string) bool { _, ok := reg.Get(n); return ok }
	ran, outcomes := 0, map[string]int{}
	for seed := range uint64(400) {
		r := rand.New(rand.NewPCG(seed, 7))
		spec := randomSpec(r)
		f, problems := flow.Compile(spec, known)
		if f == nil {
			if !problems.HasErrors() || problems.Err("random") == nil {
				t.Fatalf("seed %d: refused without an error: %q", seed, problems)
			}
			continue
		}
		ran++
		eng, err := flow.New(flow.Config{Flow: f, Tools: reg, MaxSteps: 50})
		if err != nil {
			t.Fatal(err)
		}
		h := enginetest.NewRecordingHost()
		answers := 0
		h.AskUserFn = func(context.Context, engine.UserPrompt) (engine.UserReply, error) {
			if answers++; answers > 5 {
				return engine.UserReply{}, engine.Interrupted(engine.Interrupt{Cause: engine.CauseCustom, Detail: "input-required"})
			}
			return engine.UserReply{Parts: []model.Part{model.TextPart(string(rune('a' + r.IntN(3))))}}, nil
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		_, err = eng.Execute(ctx, engine.Run{ID: "p"}, h, userBoard("a"))
		hung := ctx.Err() != nil
		cancel()
		outcomes[outcome(err)+" "+string(errdefs.ClassOf(err))]++
		switch {
		case hung:
			t.Fatalf("seed %d: the run hung: %v\n%s", seed, err, strings.Join(stepTrail(h.Events()), "\n"))
		case err == nil:
			cps := h.Checkpoints()
			if !strings.Contains(string(cps[len(cps)-1].Payload), `"ended":true`) {
				t.Errorf("seed %d: completed without an end checkpoint", seed)
			}
		case errdefs.IsInterrupted(err):
		case !strings.Contains(err.Error(), "node "):
			t.Errorf("seed %d: error %q does not say where", seed, err)
		}
	}
	t.Logf("%d flows ran: %v", ran, outcomes)
	if ran < 50 {
		t.Errorf("only %d of 400 random flows compiled: the generator is too strict to test much", ran)
	}
}
