package graph

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"agentd/internal/engine"
	"agentd/internal/engine/enginetest"
)

// notes counts the workflow notes of h by kind.
func notes(h *enginetest.RecordingHost) map[string][]map[string]any {
	out := map[string][]map[string]any{}
	for _, ev := range h.Events() {
		if n, ok := ev.(engine.WorkflowNote); ok {
			var p map[string]any
			_ = json.Unmarshal(n.Payload, &p)
			out[n.Kind] = append(out[n.Kind], p)
		}
	}
	return out
}

// inbox is the text of the messages the step's host hands its agent.
func inbox(c call) string {
	var parts []string
	for _, m := range engine.TakeFeedback(c.host) {
		parts = append(parts, m.Text())
	}
	return strings.Join(parts, "\n")
}

func newTeamEngine(t *testing.T, doc string, agents *fakeAgents, cfg Config) *Engine {
	t.Helper()
	cfg.Workflow, cfg.Agents, cfg.AgentID = mustParse(t, doc), agents, "wf"
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// coordinatorScript directs r1 and r2 at kickoff, narrates what reaches
// its inbox, and summarises the outputs in its final turn.
func coordinatorScript(turns *[]string, mu *sync.Mutex) behaviour {
	return func(ctx context.Context, c call) (string, error) {
		mu.Lock()
		*turns = append(*turns, c.Prompt)
		mu.Unlock()
		switch {
		case strings.Contains(c.Prompt, "The workflow is starting"):
			for step, focus := range map[string]string{"r1": "history", "r2": "physics"} {
				if _, err := callTool(ctx, MessageStepTool, map[string]string{"step": step, "text": "focus on " + focus}); err != nil {
					return "", err
				}
			}
			return "directed", nil
		case strings.Contains(c.Prompt, "Every step has finished"):
			var found []string
			for _, line := range strings.Split(c.Prompt, "\n") {
				if strings.HasPrefix(line, "report on ") {
					found = append(found, line)
				}
			}
			_, err := callTool(ctx, FinalizeTool, map[string]string{"summary": "Summary: " + strings.Join(found, "; ")})
			return "finalized", err
		}
		_, err := callTool(ctx, NarrateTool, map[string]string{"text": "a researcher reported"})
		return "noted", err
	}
}

// researcher reads its directions, reports to the coordinator and
// answers with what it was told to focus on.
func researcher(ctx context.Context, c call) (string, error) {
	directions := inbox(c)
	if _, err := callTool(ctx, SendMessageTool, map[string]string{"text": c.Step + " found something"}); err != nil {
		return "", err
	}
	return "report on " + c.Step + ": " + strings.TrimPrefix(directions, "Message from coordinator:\n"), nil
}

func TestCoordinatorDirectsParallelResearchersAndSummarises(t *testing.T) {
	var mu sync.Mutex
	var turns []string
	agents := newFakeAgents(map[string]behaviour{Coordinator: coordinatorScript(&turns, &mu), "researcher": researcher})
	e := newTeamEngine(t, `{name: team, agents: {researcher: {description: researches}},
		steps: [{id: r1, agent: researcher}, {id: r2, agent: researcher}]}`, agents, Config{Coordinator: &CoordinatorConfig{}})
	h, board, err := execute(t, e, "moons of Jupiter")
	if err != nil {
		t.Fatal(err)
	}
	for step, want := range map[string]string{"r1": "report on r1: focus on history", "r2": "report on r2: focus on physics"} {
		if r := stateOf(t, h).Results[step]; r == nil || r.Content != want {
			t.Errorf("step %s: %+v, want content %q", step, r, want)
		}
	}
	if got := answerOf(board); got != "Summary: report on r1: focus on history; report on r2: focus on physics" {
		t.Errorf("answer %q, want the coordinator's summary of both", got)
	}
	n := notes(h)
	if len(n["coordinator_message"]) != 2 || len(n["coordinator_inbox_message"]) != 2 || len(n["coordinator_synthesis"]) != 1 {
		t.Errorf("notes: %d coordinator_message, %d coordinator_inbox_message, %d coordinator_synthesis; want 2, 2, 1",
			len(n["coordinator_message"]), len(n["coordinator_inbox_message"]), len(n["coordinator_synthesis"]))
	}
	if len(n["message_dropped"]) != 0 {
		t.Errorf("dropped: %v", n["message_dropped"])
	}
	mu.Lock()
	defer mu.Unlock()
	inboxSeen := 0
	for _, p := range turns {
		inboxSeen += strings.Count(p, "found something")
	}
	if inboxSeen != 2 || !strings.Contains(turns[0], "The workflow is starting") || !strings.Contains(turns[len(turns)-1], "Every step has finished") {
		t.Errorf("coordinator turns saw the researchers' messages %d times, want 2; turns:\n%s", inboxSeen, strings.Join(turns, "\n---\n"))
	}
}

func TestMessageToAFinishedStepResumesIt(t *testing.T) {
	agents := newFakeAgents(map[string]behaviour{
		"fact": func(_ context.Context, c call) (string, error) {
			if q := inbox(c); q != "" {
				return "answering «" + q + "»: 42", nil
			}
			return "the fact is 42", nil
		},
		"asker": func(ctx context.Context, c call) (string, error) {
			reply, err := callTool(ctx, SendMessageTool, map[string]string{"to": "a", "text": "which fact?"})
			return "asked; " + reply, err
		},
	})
	e := newTeamEngine(t, `{name: ask, agents: {fact: {description: knows}, asker: {description: asks}},
		steps: [{id: a, agent: fact}, {id: b, agent: asker, dependsOn: [a]}]}`, agents, Config{Messaging: true})
	h, _, err := execute(t, e, "go")
	if err != nil {
		t.Fatal(err)
	}
	st := stateOf(t, h)
	if r := st.Results["b"]; r == nil || !strings.Contains(r.Content, "reply from a:\nanswering «Message from b:\nwhich fact?»: 42") {
		t.Errorf("b: %+v, want a's answer as its call's result", r)
	}
	if r := st.Results["a"]; r == nil || r.Content != "the fact is 42" {
		t.Errorf("a's own result changed: %+v", r)
	}
	var resumed bool
	for _, c := range agents.calls {
		resumed = resumed || c.RunID == "run-1/a/resume#1"
	}
	n := notes(h)
	if !resumed || len(n["resume_started"]) != 1 || len(n["resume_completed"]) != 1 || st.Mail.Resumes["a"] != 1 {
		t.Errorf("a resumed %v; notes %d started, %d completed; resumes %v", resumed, len(n["resume_started"]), len(n["resume_completed"]), st.Mail.Resumes)
	}
}

func TestMailboxDrops(t *testing.T) {
	var results []string
	var mu sync.Mutex
	send := func(ctx context.Context, to, text string) {
		r, err := callTool(ctx, SendMessageTool, map[string]string{"to": to, "text": text})
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			results = append(results, err.Error())
		} else {
			results = append(results, r)
		}
	}
	agents := newFakeAgents(map[string]behaviour{
		"chatty": func(ctx context.Context, _ call) (string, error) {
			for _, text := range []string{"one", "two", "three"} {
				send(ctx, "b", text)
			}
			send(ctx, "nobody", "hello?")
			return "sent", nil
		},
		"reader": func(_ context.Context, c call) (string, error) { return "read: " + inbox(c), nil },
	})
	e := newTeamEngine(t, `{name: full, agents: {chatty: {description: talks}, reader: {description: reads}},
		steps: [{id: a, agent: chatty}, {id: b, agent: reader, dependsOn: [a]}]}`, agents, Config{Messaging: true, MailboxSize: 2})
	h, _, err := execute(t, e, "go")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"sent to b", "sent to b", `dropped: mailbox-full (to "b"); 2 messages wait there already`, `dropped: unknown-step (to "nobody"); steps: a, b`}
	for i, w := range want {
		if i >= len(results) || results[i] != w {
			t.Errorf("send %d: %q, want %q", i, results, w)
		}
	}
	if r := stateOf(t, h).Results["b"]; r == nil || r.Content != "read: Message from a:\none\nMessage from a:\ntwo" {
		t.Errorf("b read %+v, want the two accepted messages once", r)
	}
	var reasons []string
	for _, p := range notes(h)["message_dropped"] {
		reasons = append(reasons, p["reason"].(string))
	}
	if strings.Join(reasons, ",") != "mailbox-full,unknown-step" {
		t.Errorf("drop notes %v, want mailbox-full then unknown-step", reasons)
	}
}

// A step the coordinator messages that finishes without reading the
// message is resumed to answer it before the coordinator's final turn,
// which reads the answer.
func TestUnreadMessageIsAnsweredBeforeTheFinalTurn(t *testing.T) {
	var mu sync.Mutex
	var final string
	agents := newFakeAgents(map[string]behaviour{
		Coordinator: func(ctx context.Context, c call) (string, error) {
			switch {
			case strings.Contains(c.Prompt, "The workflow is starting"):
				_, err := callTool(ctx, MessageStepTool, map[string]string{"step": "quick", "text": "also check the date"})
				return "directed", err
			case strings.Contains(c.Prompt, "Every step has finished"):
				mu.Lock()
				final = c.Prompt
				mu.Unlock()
			}
			return "ok", nil
		},
		"quick": func(_ context.Context, c call) (string, error) {
			if c.RunID == "run-1/quick/resume#1" {
				return "the date is fine (" + inbox(c) + ")", nil
			}
			return "done without reading", nil // never takes its feedback
		},
	})
	e := newTeamEngine(t, `{name: unread, agents: {quick: {description: hurries}}, steps: [{id: quick, agent: quick}]}`,
		agents, Config{Coordinator: &CoordinatorConfig{}})
	h, _, err := execute(t, e, "go")
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if !strings.Contains(final, "- from quick: the date is fine (Message from coordinator:\nalso check the date)") {
		t.Errorf("final turn's prompt lacks quick's answer:\n%s", final)
	}
	if n := notes(h); len(n["message_dropped"]) != 0 || len(n["resume_completed"]) != 1 {
		t.Errorf("drops %v, %d resumes; want none and 1", n["message_dropped"], len(n["resume_completed"]))
	}
}

// A coordinator turn cut by a stop resumes, in the next attempt, with the
// prompt (and the messages) it had; the final turn still runs after it.
func TestCutCoordinatorTurnResumes(t *testing.T) {
	doc := `{name: cut, steps: [{id: only}]}`
	first := newFakeAgents(map[string]behaviour{Coordinator: block})
	h := enginetest.NewRecordingHost()
	done := make(chan error, 1)
	go func() {
		_, err := newTeamEngine(t, doc, first, Config{Coordinator: &CoordinatorConfig{}}).Execute(t.Context(), engine.Run{ID: "run-1"}, h, boardWith("go"))
		done <- err
	}()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if _, err := h.WaitForStep(ctx, "wf.node.coordinator"); err != nil {
		t.Fatal(err)
	}
	h.Fire(engine.Interrupt{Cause: engine.CauseHostShutdown})
	if err := <-done; err == nil {
		t.Fatal("the interrupted run completed")
	}
	cps := h.Checkpoints()
	last := cps[len(cps)-1]

	var prompts []string
	var mu sync.Mutex
	second := newFakeAgents(map[string]behaviour{Coordinator: func(ctx context.Context, c call) (string, error) {
		mu.Lock()
		prompts = append(prompts, c.RunID+": "+firstLine(c.Prompt)+" … "+lastLine(c.Prompt))
		mu.Unlock()
		if strings.Contains(c.Prompt, "Every step has finished") {
			_, err := callTool(ctx, FinalizeTool, map[string]string{"summary": "all done"})
			return "ok", err
		}
		return "ok", nil
	}})
	board, err := newTeamEngine(t, doc, second, Config{Coordinator: &CoordinatorConfig{}}).Execute(t.Context(), engine.Run{ID: "run-1", ResumeFrom: &last}, enginetest.NewRecordingHost(), engine.NewBoard())
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(prompts) != 2 || !strings.HasPrefix(prompts[0], "run-1/coordinator#1: ") || !strings.Contains(prompts[0], "The workflow is starting") ||
		!strings.HasPrefix(prompts[1], "run-1/coordinator#2: ") {
		t.Errorf("turns after the resume: %q, want the cut kickoff (#1) again, then the final turn (#2)", prompts)
	}
	if answerOf(board) != "all done" {
		t.Errorf("answer %q", answerOf(board))
	}
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}
