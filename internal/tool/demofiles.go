package tool

import (
	"context"
	"encoding/json"
)

// The demo file tools of the guarded agent. They touch no file: they say
// what they would have done, so that a demo of approvals and governance
// is safe to run anywhere. delete_file requires approval (its own flag);
// which reads are allowed is the agent's governance policy's business.
const (
	DemoDeleteFileName = "delete_file"
	DemoReadFileName   = "read_file"
)

// DemoFileTools returns delete_file and read_file.
func DemoFileTools() []Tool {
	schema := json.RawMessage(`{"type":"object","properties":{"path":{"type":"string","minLength":1}},"required":["path"],"additionalProperties":false}`)
	type args struct {
		Path string `json:"path"`
	}
	del := Typed(Spec{
		Name:        DemoDeleteFileName,
		Description: "Delete a file (demo: nothing is deleted). Every call waits for a human's approval.",
		Parameters:  schema,
		Flags:       Flags{Approval: ApprovalRequired},
	}, func(_ context.Context, a args) (Result, error) {
		return Text("deleted " + a.Path), nil
	})
	read := Typed(Spec{
		Name:        DemoReadFileName,
		Description: "Read a file (demo: answers with made-up contents).",
		Parameters:  schema,
		Flags:       Flags{ParallelSafe: true, Idempotent: true},
	}, func(_ context.Context, a args) (Result, error) {
		return Text("contents of " + a.Path + ": hello from the demo file system"), nil
	})
	return []Tool{del, read}
}
