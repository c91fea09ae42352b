package memstore

import (
	"slices"
	"strconv"
	"time"

	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/store"
)

// A task is kept as a record (see record.go) in two parts: a header of
// the fields the store sets or a task never changes (id, context, agent,
// tenant, version, times) and its state, then a body of the other fields
// the caller sets. Apply encodes the body without the lock; a new task's
// header is known then too, an update's is joined to it under the lock.
// Apply's checks, eviction and ListTasks' filters
// read only the header, which allocates nothing; it starts with what the
// filters ask about, so that matches can stop at the first mismatch.

// taskHeader is the head of a task record.
type taskHeader struct {
	agentID       string
	state         run.TaskState
	updated       time.Time
	id, contextID string
	tenant        string
	version       int64
	created       time.Time
}

// key is the task's place in a taskIndex.
func (h taskHeader) key() taskKey { return taskKey{h.created.UnixMicro(), h.id} }

// taskUpdate is a task update, validated.
type taskUpdate struct {
	id    string
	state run.TaskState
	// version is the version the update replaces.
	version int64
}

// taskRecord joins h and a body written by putTaskBody into a record.
func taskRecord(h taskHeader, body []byte) string {
	var buf [256]byte // most tasks fit: one allocation, for the record
	b := putTime(putString(putString(buf[:0], h.agentID), string(h.state)), h.updated)
	b = putString(putString(putString(b, h.id), h.contextID), h.tenant)
	b = putTime(putInt(b, h.version), h.created)
	return string(append(b, body...))
}

// putTaskBody validates the caller's fields of t but for its state,
// normalising them as messages are, and appends them.
func putTaskBody(b []byte, t run.Task, field fieldName) ([]byte, error) {
	b = putBool(putInt(b, int64(t.Attempt)), t.CancelRequested)
	b = putInt(putInt(putInt(b, t.Usage.InputTokens), t.Usage.OutputTokens), t.Usage.TotalTokens)
	b = putBool(b, t.Error != nil)
	if e := t.Error; e != nil {
		b = putString(putString(b, e.Class), e.Message)
	}
	b = putBool(b, t.StatusMessage != nil)
	var err error
	if m := t.StatusMessage; m != nil {
		if b, err = putMessage(b, *m, func() string { return field() + ".status_message" }); err != nil {
			return b, err
		}
	}
	if b, err = putArtifacts(b, t.Artifacts, func() string { return field() + ".artifacts" }); err != nil {
		return b, err
	}
	if b, err = putJSONMap(b, t.Metadata, func() string { return field() + ".metadata" }); err != nil {
		return b, err
	}
	return putModelUsage(putSignals(b, t.Signals), t.ModelUsage), nil
}

// putModelUsage appends a task's usage by model (count+1, 0 for none), in
// the order of the model names so that equal tasks encode alike.
func putModelUsage(b []byte, byModel map[string]model.TokenUsage) []byte {
	if len(byModel) == 0 {
		return putUint(b, 0)
	}
	b = putUint(b, uint64(len(byModel))+1)
	var room [1]string
	for _, name := range model.ModelNames(room[:0], byModel) { // the same record for the same usage
		u := byModel[name]
		b = putInt(putInt(putInt(putString(b, name), u.InputTokens), u.OutputTokens), u.TotalTokens)
	}
	return b
}

// modelUsage reads what putModelUsage wrote.
func (r *reader) modelUsage() map[string]model.TokenUsage {
	n := int(r.uint())
	if n == 0 {
		return nil
	}
	out := make(map[string]model.TokenUsage, n-1)
	for range n - 1 {
		name := r.str()
		out[name] = model.TokenUsage{InputTokens: r.int(), OutputTokens: r.int(), TotalTokens: r.int()}
	}
	return out
}

// putSignals appends a task's pending signals (count+1, 0 for none).
func putSignals(b []byte, sigs []run.PendingSignal) []byte {
	if len(sigs) == 0 {
		return putUint(b, 0)
	}
	b = putUint(b, uint64(len(sigs))+1)
	for _, s := range sigs {
		b = putTime(putString(putString(putString(b, s.ID), s.Type), s.Text), store.StoredTime(s.At))
	}
	return b
}

// signals reads what putSignals wrote.
func (r *reader) signals() []run.PendingSignal {
	n := int(r.uint())
	if n == 0 {
		return nil
	}
	out := make([]run.PendingSignal, n-1)
	for i := range out {
		out[i] = run.PendingSignal{ID: r.str(), Type: r.str(), Text: r.str(), At: r.time()}
	}
	return out
}

func putArtifacts(b []byte, arts []model.Artifact, field fieldName) ([]byte, error) {
	if arts == nil {
		return putUint(b, 0), nil
	}
	b = putUint(b, uint64(len(arts))+1)
	for i, a := range arts {
		f := func() string { return field() + "[" + strconv.Itoa(i) + "]" }
		b = putString(putString(putString(b, a.ID), a.Name), a.Description)
		var err error
		if b, err = putParts(b, a.Parts, func() string { return f() + ".parts" }); err != nil {
			return b, err
		}
		if b, err = putJSONMap(b, a.Metadata, func() string { return f() + ".metadata" }); err != nil {
			return b, err
		}
	}
	return b, nil
}

// taskHeader reads the header of a task record.
func (r *reader) taskHeader() taskHeader {
	return taskHeader{
		agentID: r.str(), state: run.TaskState(r.str()), updated: r.time(),
		id: r.str(), contextID: r.str(), tenant: r.str(), version: r.int(), created: r.time(),
	}
}

// matches reports whether the task record rec matches the filters of q,
// reading no more of it than it needs.
func matches(rec string, q run.TaskQuery) bool {
	r := reader{s: rec}
	if agent := r.str(); q.AgentID != "" && agent != q.AgentID {
		return false
	}
	if state := run.TaskState(r.str()); len(q.States) > 0 && !slices.Contains(q.States, state) {
		return false
	}
	return q.UpdatedAfter.IsZero() || r.time().After(q.UpdatedAfter)
}

// headerOf reads the header of the task record rec.
func headerOf(rec string) taskHeader {
	r := reader{s: rec}
	return r.taskHeader()
}

// readTask decodes the task record rec into a task that shares nothing
// mutable with the store.
func readTask(rec string) run.Task {
	r := reader{s: rec}
	h := r.taskHeader()
	t := run.Task{
		ID: h.id, ContextID: h.contextID, AgentID: h.agentID, Tenant: h.tenant,
		Version: h.version, CreatedAt: h.created, UpdatedAt: h.updated, State: h.state,
		Attempt: int(r.int()), CancelRequested: r.bool(),
		Usage: model.TokenUsage{InputTokens: r.int(), OutputTokens: r.int(), TotalTokens: r.int()},
	}
	if r.bool() {
		t.Error = &run.TaskError{Class: r.str(), Message: r.str()}
	}
	if r.bool() {
		m := r.message(nil)
		t.StatusMessage = &m
	}
	if n := int(r.uint()); n > 0 {
		t.Artifacts = make([]model.Artifact, n-1)
		for i := range t.Artifacts {
			t.Artifacts[i] = model.Artifact{ID: r.str(), Name: r.str(), Description: r.str(), Parts: r.parts(nil), Metadata: r.jsonMap()}
		}
	}
	t.Metadata = r.jsonMap()
	t.Signals = r.signals()
	t.ModelUsage = r.modelUsage()
	return t
}
