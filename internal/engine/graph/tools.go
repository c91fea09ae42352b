package graph

import (
	"context"
	"encoding/json"
	"fmt"

	"agentd/internal/tool"
)

// The workflow tools: what a step's agent may call to reach the run it is
// a step of, when the workflow's Config enables them. The Agents
// implementation adds those an AgentSpec's WorkflowTools names to the
// agent's tools (Tool returns each); their calls find the step through
// their context, which the engine marks when it starts the step's child
// run.
const (
	SharedMemoryReadTool  = "shared_memory_read"
	SharedMemoryWriteTool = "shared_memory_write"
)

// Tool returns the workflow tool of that name, or nil for another name.
func Tool(name string) tool.Tool {
	switch name {
	case SharedMemoryReadTool:
		return memoryReadTool
	case SharedMemoryWriteTool:
		return memoryWriteTool
	case SendMessageTool:
		return sendMessageTool
	case MessageStepTool:
		return messageStepTool
	case ReadInboxTool:
		return readInboxTool
	case NarrateTool:
		return narrateTool
	case FinalizeTool:
		return finalizeTool
	}
	return nil
}

type memoryArgs struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

var memoryReadTool = tool.Typed(tool.Spec{
	Name: SharedMemoryReadTool,
	Description: "Read the workflow's shared memory. key is \"<writer>/<key>\" for another step's entry, " +
		"a bare key for one you wrote, or empty to list every entry.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","description":"\"<writer>/<key>\", a key of your own, or empty for the list"}}}`),
	Flags:      tool.Flags{ParallelSafe: true, Idempotent: true},
}, func(ctx context.Context, a memoryArgs) (tool.Result, error) {
	s, err := stepFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	v, ok := s.memoryRead(a.Key)
	if !ok {
		return tool.Result{Content: fmt.Sprintf("no entry %q; call %s with an empty key to list the entries", a.Key, SharedMemoryReadTool), IsError: true}, nil
	}
	return tool.Text(v), nil
})

var memoryWriteTool = tool.Typed(tool.Spec{
	Name: SharedMemoryWriteTool,
	Description: "Write an entry to the workflow's shared memory, where every step can read it. " +
		"It is stored under your name as \"<you>/<key>\" and replaces what you wrote there before.",
	Parameters: json.RawMessage(`{"type":"object","properties":{"key":{"type":"string"},"value":{"type":"string"}},"required":["key","value"]}`),
	Flags:      tool.Flags{Idempotent: true},
}, func(ctx context.Context, a memoryArgs) (tool.Result, error) {
	s, err := stepFrom(ctx)
	if err != nil {
		return tool.Result{}, err
	}
	qualified, err := s.memoryWrite(a.Key, a.Value)
	if err != nil {
		return tool.Result{}, err
	}
	return tool.Text("stored as " + qualified), nil
})
