package a2a

import (
	"encoding/json"

	"github.com/a2aproject/a2a-go/v2/a2a"

	"agentd/internal/run"
)

// noteUpdate translates a progress event (a tool call's progress: a peer
// agent called as a tool) or a handoff event into a working status
// update whose agent message carries the event as a data part,
// {"progress": {…}} or {"handoff": {…}}: A2A readers see them happen,
// and the answer artifact holds only the run's own answer.
func (x *translator) noteUpdate(ev run.Event) a2a.Event {
	var body map[string]any
	if json.Unmarshal(ev.Data, &body) != nil {
		return nil
	}
	for _, k := range []string{"run_id", "seq", "type"} {
		delete(body, k)
	}
	msg := &a2a.Message{
		ID: x.derivedID(ev.Type, ev.Seq), Role: a2a.MessageRoleAgent, TaskID: x.taskID, ContextID: x.contextID,
		Parts: a2a.ContentParts{a2a.NewDataPart(map[string]any{ev.Type: body})},
	}
	return x.status(ev, a2a.TaskStateWorking, msg)
}
