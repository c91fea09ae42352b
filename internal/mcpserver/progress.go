package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"agentd/internal/runtime"
	"agentd/internal/store"
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
		for _, ev := range evs {
			done, msg := describe(ev)
			if msg != "" {
				c.notify(ctx, float64(ev.Seq), msg)
			}
			if done {
				return nil
			}
		}
	}
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
	Text     string          `json:"text"`
	Actor    string          `json:"actor"`
	State    store.TaskState `json:"state"`
	Tool     string          `json:"tool"`
	ToolCall *struct {
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

// describe is the progress message of a run event ("" for none) and
// whether the call stops following the run after it.
func describe(ev store.Event) (done bool, msg string) {
	var d eventData
	if json.Unmarshal(ev.Data, &d) != nil {
		return false, ""
	}
	switch ev.Type {
	case runtime.EventDelta:
		switch {
		case d.ToolCall != nil:
			return false, "calling tool " + d.ToolCall.Name
		case d.ToolResult != nil && d.ToolResult.IsError:
			return false, "tool " + d.ToolResult.Name + " failed"
		case d.ToolResult != nil:
			return false, "tool " + d.ToolResult.Name + " answered"
		}
		return false, d.Text
	case runtime.EventStepStart:
		return false, "step " + d.Actor + " started"
	case runtime.EventStepComplete:
		return false, "step " + d.Actor + " completed"
	case runtime.EventStepError:
		return false, "step " + d.Actor + " failed"
	case runtime.EventProgress:
		if d.Text != "" {
			return false, d.Text
		}
		return false, "tool " + d.Tool + " is working"
	case runtime.EventStatus:
		return false, "run " + string(d.State)
	case runtime.EventRunEnd:
		return returnsOn(d.State), ""
	}
	return false, ""
}

// returnsOn reports whether a call returns when its run is in state s: at
// the end, and when the run waits for the caller.
func returnsOn(s store.TaskState) bool {
	return s.Terminal() || s == store.StateInputRequired || s == store.StateAuthRequired
}
