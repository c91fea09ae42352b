package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/run"
	"agentd/internal/runtime"
)

// progressIdle is how long a progress stream waits for an event before it
// looks again (the run's log wakes it sooner).
const progressIdle = 15 * time.Second

// followProgress turns the run's events after seq `after` into progress
// notifications until the attempt ends in a state the call returns on
// (terminal or waiting for input). progress is the event's seq, so it
// increases strictly across the whole call, answers included.
func (c *call) followProgress(ctx context.Context, st *runtime.Stream) error {
	for {
		evs, err := st.Next(ctx, 256, progressIdle)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if c.notifyAll(ctx, evs) {
			return nil
		}
	}
}

// notifyAll sends the notifications of a batch of events and reports
// whether the call stops following the run. Consecutive tokens of a batch
// go as one notification (progress: the last one's seq): a stream that
// keeps up sends each token alone, one that lags catches up in a few
// notifications instead of a flushed write per token — as the REST stream
// writes a batch at once.
func (c *call) notifyAll(ctx context.Context, evs []run.Event) (done bool) {
	var tokens strings.Builder
	var last int64
	flush := func() {
		if tokens.Len() > 0 {
			c.notify(ctx, float64(last), tokens.String())
			tokens.Reset()
		}
	}
	defer flush()
	for _, ev := range evs {
		n := describe(ev)
		if n.token {
			tokens.WriteString(n.msg)
			last = ev.Seq
			continue
		}
		flush()
		if n.msg != "" {
			c.notify(ctx, float64(ev.Seq), n.msg)
		}
		if n.done {
			return true
		}
	}
	return false
}

// notify sends one progress notification; a client that left is noticed
// by the call's context, not here.
func (c *call) notify(ctx context.Context, progress float64, msg string) {
	_ = c.req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
		ProgressToken: c.token, Progress: progress, Message: msg,
		Meta: mcp.Meta{metaRunID: c.runID},
	})
}

// eventData is the union of the members describe reads from an event.
type eventData struct {
	Text  string        `json:"text"`
	Actor string        `json:"actor"`
	State run.TaskState `json:"state"`
	Tool  string        `json:"tool"`
	// Key, Policy and Resolution are an effect event's (effect.*).
	Key        string `json:"key"`
	Policy     string `json:"policy"`
	Resolution string `json:"resolution"`
	ToolCall   *struct {
		Name string `json:"name"`
	} `json:"tool_call"`
	ToolResult *struct {
		Name    string `json:"name"`
		IsError bool   `json:"is_error"`
	} `json:"tool_result"`
	Prompt *struct {
		Parts []struct {
			Text string `json:"text"`
		} `json:"parts"`
	} `json:"prompt"`
}

// note is what an event says to a caller following the run.
type note struct {
	msg   string // the progress message; "" for none
	token bool   // msg is generated text (a delta's token)
	done  bool   // the call stops following the run after it
}

// describe is the note of a run event.
func describe(ev run.Event) note {
	if ev.Type == runtime.EventDelta {
		if text, ok := tokenText(ev.Data); ok {
			return note{msg: text, token: text != ""}
		}
	}
	var d eventData
	if json.Unmarshal(ev.Data, &d) != nil {
		return note{}
	}
	switch ev.Type {
	case runtime.EventDelta:
		switch {
		case d.ToolCall != nil:
			return note{msg: "calling tool " + d.ToolCall.Name}
		case d.ToolResult != nil && d.ToolResult.IsError:
			return note{msg: "tool " + d.ToolResult.Name + " failed"}
		case d.ToolResult != nil:
			return note{msg: "tool " + d.ToolResult.Name + " answered"}
		}
		return note{msg: d.Text, token: d.Text != ""}
	case runtime.EventStepStart:
		return note{msg: "step " + d.Actor + " started"}
	case runtime.EventStepComplete:
		return note{msg: "step " + d.Actor + " completed"}
	case runtime.EventStepError:
		return note{msg: "step " + d.Actor + " failed"}
	case runtime.EventProgress:
		if d.Text != "" {
			return note{msg: d.Text}
		}
		return note{msg: "tool " + d.Tool + " is working"}
	case runtime.EventStatus:
		return note{msg: "run " + string(d.State)}
	case runtime.EventEffectIntent:
		return note{msg: "tool " + d.Tool + ": its effect is recorded before it runs (key " + d.Key + ")"}
	case runtime.EventEffectResult:
		return note{msg: "tool " + d.Tool + ": its effect is done (key " + d.Key + ")"}
	case runtime.EventEffectDoubt:
		return note{msg: "tool " + d.Tool + " is in doubt after a crash; policy " + d.Policy + " (key " + d.Key + ")"}
	case runtime.EventEffectResolved:
		return note{msg: "tool " + d.Tool + " in doubt: " + d.Resolution + " (key " + d.Key + ")"}
	case runtime.EventRunEnd:
		return note{done: returnsOn(d.State)}
	}
	return note{}
}

// returnsOn reports whether a call returns when its run is in state s: at
// the end, and when the run waits for the caller.
func returnsOn(s run.TaskState) bool {
	return s.Terminal() || s == run.StateInputRequired || s == run.StateAuthRequired
}

// tokenText takes the text out of a token delta without decoding the
// whole event (most of a run's events are tokens), through the log's own
// reader (runtime.TokenLiterals); ok is false for any other shape (a tool
// call or result, text not last), which describe decodes in full.
func tokenText(data []byte) (text string, ok bool) {
	_, lit, ok := runtime.TokenLiterals(data)
	if !ok || json.Unmarshal(lit, &text) != nil {
		return "", false
	}
	return text, true
}
