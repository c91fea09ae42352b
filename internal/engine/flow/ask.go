package flow

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"agentd/internal/engine"
	"agentd/internal/errdefs"
	"agentd/internal/model"
)

// ask asks input node n's question and returns the node its answer leads
// to. The answer is validated and normalised (confirm, choice, int); a
// refused answer, or one no route takes, is asked again with the reason.
// Hosts that park the run (agentd's runtime) answer AskUser with an
// interrupt: the run stops here and, resumed from the checkpoint written
// before the question, asks again and receives the reply.
func (x *execution) ask(n *node) (string, error) {
	if intr, ok := x.followingCancel(); ok {
		return "", fmt.Errorf("flow %s: node %q waits for input after a cancel: %w", x.f.name, n.id, engine.Interrupted(intr))
	}
	if w := x.st.Waiting; w == nil || w.Node != n.id || w.Visit != x.st.Visit {
		x.st.Waiting = &waiting{Node: n.id, Visit: x.st.Visit, Since: x.e.cfg.Now().UTC()}
		if err := x.checkpoint(); err != nil {
			return "", err
		}
	}
	reason := ""
	for {
		raw, err := x.answer(n, reason)
		if err != nil {
			return "", err
		}
		v, err := n.in.accept(raw)
		next := ""
		if err == nil {
			next, err = x.routeAnswer(n, v)
		}
		var refused *answerError
		if errors.As(err, &refused) {
			reason = refused.reason
			continue
		}
		if err != nil {
			return "", err
		}
		x.st.Waiting = nil
		x.st.Signal = nil // the user answers again: every handler is armed again
		x.st.Input, x.st.Sys["ans"] = v, v
		x.steps = 0
		return next, nil
	}
}

// routeAnswer routes answer v with it saved under save_to, so conditions
// see it there (name == 'Ada'); an answer no route takes is unsaved again.
func (x *execution) routeAnswer(n *node, v any) (string, error) {
	if n.saveTo == "" {
		return x.route(n, v)
	}
	old, had := x.st.Context[n.saveTo]
	x.st.Context[n.saveTo] = v
	next, err := x.route(n, v)
	var refused *answerError
	if errors.As(err, &refused) {
		if had {
			x.st.Context[n.saveTo] = old
		} else {
			delete(x.st.Context, n.saveTo)
		}
	}
	return next, err
}

// answer asks the question once and returns the reply's text. A timeout
// (the reply came too late, or none came in time) raises the timeout
// signal; an interrupt raises its signal.
func (x *execution) answer(n *node, reason string) (string, error) {
	prompt, err := x.prompt(n, reason)
	if err != nil {
		return "", err
	}
	var deadline time.Time
	if n.timeout > 0 {
		deadline = x.st.Waiting.Since.Add(n.timeout)
		if !x.e.cfg.Now().Before(deadline) {
			return "", &raised{name: SignalTimeout}
		}
	}
	var (
		reply    engine.UserReply
		timedOut bool
	)
	intr, got := x.during(func(ctx context.Context) {
		if !deadline.IsZero() {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, deadline.Sub(x.e.cfg.Now()))
			defer cancel()
		}
		reply, err = x.host.AskUser(ctx, prompt)
		timedOut = err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded)
	})
	switch {
	case got:
		return "", &raised{name: signalOf(intr), intr: &intr}
	case x.ctx.Err() != nil:
		return "", x.ctx.Err()
	case timedOut, errdefs.IsTimeout(err):
		// The host's clock, or its sweep of expired prompts, may decide
		// the timeout too (engine.SignalTimeout).
		return "", &raised{name: SignalTimeout}
	case errdefs.IsInterrupted(err):
		return "", &parked{err: err}
	case err != nil:
		return "", err
	case !deadline.IsZero() && !x.e.cfg.Now().Before(deadline):
		return "", &raised{name: SignalTimeout}
	}
	return replyText(reply), nil
}

// prompt is the question: the node's rendered content (after the reason a
// previous answer was refused), and a data part with the constraints —
// input type, options, default, timeout — for clients that render a form.
func (x *execution) prompt(n *node, reason string) (engine.UserPrompt, error) {
	question, err := x.render(n)
	if err != nil {
		return engine.UserPrompt{}, err
	}
	if question == "" {
		question = defaultQuestion(n)
	}
	if reason != "" {
		question = reason + "\n\n" + question
	}
	c := constraints{Node: n.id, Type: n.in.kind, Options: n.in.options, Default: n.in.def, Reason: reason}
	meta := map[string]string{"node": n.id, "input_type": n.in.kind}
	if n.timeout > 0 {
		c.Timeout = n.timeout.String()
		c.Deadline = x.st.Waiting.Since.Add(n.timeout).Format(time.RFC3339Nano)
		meta[engine.PromptDeadlineKey] = c.Deadline
	}
	data, err := model.DataPart(c)
	if err != nil {
		return engine.UserPrompt{}, err
	}
	schema, err := json.Marshal(n.in.schema())
	if err != nil {
		return engine.UserPrompt{}, err
	}
	return engine.UserPrompt{
		Parts:    []model.Part{model.TextPart(question), data},
		Schema:   schema,
		Source:   engine.NodeActor(x.agent, n.id),
		Metadata: meta,
	}, nil
}

// parked is a question the host answered by parking the run (an
// interrupt from AskUser): the run stops here and a resume asks again.
type parked struct{ err error }

func (p *parked) Error() string { return p.err.Error() }
func (p *parked) Unwrap() error { return p.err }

// constraints is the data part of a prompt.
type constraints struct {
	Node     string   `json:"node"`
	Type     string   `json:"input_type"`
	Options  []string `json:"options,omitempty"`
	Default  string   `json:"default,omitempty"`
	Timeout  string   `json:"timeout,omitempty"`
	Deadline string   `json:"deadline,omitempty"`
	Reason   string   `json:"reason,omitempty"`
}

func defaultQuestion(n *node) string {
	switch n.in.kind {
	case InputConfirm:
		return "Proceed? (yes/no)"
	case InputChoice:
		return "Choose one: " + quoteList(n.in.options)
	case InputInt:
		return "Enter a whole number."
	}
	return "Your answer?"
}

// replyText is the reply's text, or a scalar sent as data (a form field).
func replyText(r engine.UserReply) string {
	if t := r.Text(); t != "" {
		return t
	}
	for _, p := range r.Parts {
		if p.Type != model.PartData {
			continue
		}
		var v any
		if json.Unmarshal(p.Data, &v) != nil {
			continue
		}
		switch s := v.(type) {
		case string:
			return s
		case float64, bool:
			return fmt.Sprint(s)
		}
	}
	return ""
}
