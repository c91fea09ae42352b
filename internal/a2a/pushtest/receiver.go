package pushtest

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/v2/a2a"

	agenta2a "agentd/internal/a2a"
)

// Notification is one request the receiver took (answered 2xx).
type Notification struct {
	Path     string
	Header   http.Header
	Body     []byte
	Received time.Time
	// Event is the body's StreamResponse, nil when it did not decode.
	Event a2a.Event
	// TaskID and Seq are the update's task and resumable-stream seq.
	TaskID string
	Seq    int64
}

// Fault is what the receiver does with one request instead of taking it.
type Fault struct {
	// Status answers the request with this status (e.g. 503).
	Status int
	// Hold keeps the request this long before answering (503 unless
	// Status says otherwise): a sender whose timeout is shorter sees a
	// timeout.
	Hold time.Duration
}

// Receiver is a webhook receiver on loopback. Safe for concurrent use.
type Receiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	faults  []Fault
	faultAt map[string][]Fault // by path, met before faults
	down    map[string]bool    // paths that answer 503 to everything
	slow    map[string]time.Duration
	got     []Notification
	failed  int
	changed chan struct{} // closed and replaced whenever got grows
}

// NewReceiver starts a receiver; Close stops it.
func NewReceiver() *Receiver {
	r := &Receiver{changed: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.serve))
	return r
}

// URL is the receiver's address with path appended ("/hooks/a").
func (r *Receiver) URL(path string) string { return r.srv.URL + path }

// Close stops the receiver, ending held requests.
func (r *Receiver) Close() {
	r.srv.CloseClientConnections()
	r.srv.Close()
}

// FailNext makes the next requests (whatever their path) meet faults, in
// order.
func (r *Receiver) FailNext(faults ...Fault) {
	r.mu.Lock()
	r.faults = append(r.faults, faults...)
	r.mu.Unlock()
}

// FailNextAt makes the next requests to path meet faults, in order,
// before any FailNext fault; requests to other paths are not affected.
func (r *Receiver) FailNextAt(path string, faults ...Fault) {
	r.mu.Lock()
	if r.faultAt == nil {
		r.faultAt = map[string][]Fault{}
	}
	r.faultAt[path] = append(r.faultAt[path], faults...)
	r.mu.Unlock()
}

// Down makes every request to path answer 503 until Up(path).
func (r *Receiver) Down(path string) {
	r.mu.Lock()
	if r.down == nil {
		r.down = map[string]bool{}
	}
	r.down[path] = true
	r.mu.Unlock()
}

// Up ends Down(path).
func (r *Receiver) Up(path string) {
	r.mu.Lock()
	delete(r.down, path)
	r.mu.Unlock()
}

// Slow makes every request to path wait d before it is taken.
func (r *Receiver) Slow(path string, d time.Duration) {
	r.mu.Lock()
	if r.slow == nil {
		r.slow = map[string]time.Duration{}
	}
	r.slow[path] = d
	r.mu.Unlock()
}

// Failed returns how many requests met a fault.
func (r *Receiver) Failed() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.failed
}

// Notifications returns the notifications taken so far, in arrival order.
func (r *Receiver) Notifications() []Notification {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Notification(nil), r.got...)
}

// WaitFor waits until cond holds for the notifications taken so far, or
// ctx ends (then it returns ctx's error).
func (r *Receiver) WaitFor(ctx context.Context, cond func([]Notification) bool) error {
	for {
		r.mu.Lock()
		ok, ch := cond(r.got), r.changed
		r.mu.Unlock()
		if ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-ch:
		}
	}
}

func (r *Receiver) serve(w http.ResponseWriter, req *http.Request) {
	body, err := io.ReadAll(req.Body)
	if err != nil {
		w.WriteHeader(http.StatusBadRequest)
		return
	}
	if f, ok := r.nextFault(req.URL.Path); ok {
		if f.Hold > 0 {
			select {
			case <-req.Context().Done():
			case <-time.After(f.Hold):
			}
		}
		status := f.Status
		if status == 0 {
			status = http.StatusServiceUnavailable
		}
		w.WriteHeader(status)
		return
	}
	r.mu.Lock()
	slow := r.slow[req.URL.Path]
	r.mu.Unlock()
	if slow > 0 {
		select {
		case <-req.Context().Done():
			w.WriteHeader(http.StatusServiceUnavailable)
			return
		case <-time.After(slow):
		}
	}
	n := Notification{Path: req.URL.Path, Header: req.Header.Clone(), Body: body, Received: time.Now()}
	var sr a2a.StreamResponse
	if task, ok := v0Task(body); ok {
		n.Event = task
	} else if json.Unmarshal(body, &sr) == nil {
		n.Event = sr.Event
	}
	n.TaskID, n.Seq = taskAndSeq(n.Event)
	r.mu.Lock()
	r.got = append(r.got, n)
	close(r.changed)
	r.changed = make(chan struct{})
	r.mu.Unlock()
	w.WriteHeader(http.StatusNoContent)
}

func (r *Receiver) nextFault(path string) (Fault, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var f Fault
	switch {
	case r.down[path]:
		f = Fault{Status: http.StatusServiceUnavailable}
	case len(r.faultAt[path]) > 0:
		f, r.faultAt[path] = r.faultAt[path][0], r.faultAt[path][1:]
	case len(r.faults) > 0:
		f, r.faults = r.faults[0], r.faults[1:]
	default:
		return Fault{}, false
	}
	r.failed++
	return f, true
}

// taskAndSeq reads an update's task id and the seq agentd puts in its
// metadata.
func taskAndSeq(ev a2a.Event) (string, int64) {
	var meta map[string]any
	var task a2a.TaskID
	switch v := ev.(type) {
	case *a2a.TaskStatusUpdateEvent:
		meta, task = v.Metadata, v.TaskID
	case *a2a.TaskArtifactUpdateEvent:
		meta, task = v.Metadata, v.TaskID
	case *a2a.Task:
		meta, task = v.Metadata, v.ID
	}
	seq, _ := meta[agenta2a.MetaSeq].(float64)
	return string(task), int64(seq)
}

// Seqs returns the seqs of ns in order, each once: the updates as a
// receiver that drops repeats keeps them.
func Seqs(ns []Notification) []int64 {
	var out []int64
	seen := map[int64]bool{}
	for _, n := range ns {
		if !seen[n.Seq] {
			seen[n.Seq] = true
			out = append(out, n.Seq)
		}
	}
	return out
}

// InOrder reports whether ns arrived in seq order: every seq is above all
// before it, or a repeat of one already seen (a delivery whose cursor a
// killed replica had not saved yet is sent again).
func InOrder(ns []Notification) bool {
	var hi int64
	seen := map[int64]bool{}
	for _, n := range ns {
		switch {
		case n.Seq > hi:
			hi = n.Seq
		case !seen[n.Seq]:
			return false // an older update that never came before
		}
		seen[n.Seq] = true
	}
	return true
}

// v0Task decodes the body a v0.3 config's webhook gets, a v0.3 Task
// (kind "task", kebab-case states), into the v1.0 Task the tests compare;
// only what they look at: ids, state, metadata, the artifacts' text.
func v0Task(body []byte) (*a2a.Task, bool) {
	var t struct {
		Kind      string `json:"kind"`
		ID        string `json:"id"`
		ContextID string `json:"contextId"`
		Status    struct {
			State string `json:"state"`
		} `json:"status"`
		Artifacts []struct {
			ID    string `json:"artifactId"`
			Name  string `json:"name"`
			Parts []struct {
				Text string `json:"text"`
			} `json:"parts"`
		} `json:"artifacts"`
		Metadata map[string]any `json:"metadata"`
	}
	if json.Unmarshal(body, &t) != nil || t.Kind != "task" {
		return nil, false
	}
	out := &a2a.Task{ID: a2a.TaskID(t.ID), ContextID: t.ContextID, Metadata: t.Metadata,
		Status: a2a.TaskStatus{State: a2a.TaskState("TASK_STATE_" + strings.ToUpper(strings.ReplaceAll(t.Status.State, "-", "_")))}}
	for _, a := range t.Artifacts {
		art := &a2a.Artifact{ID: a2a.ArtifactID(a.ID), Name: a.Name}
		for _, p := range a.Parts {
			art.Parts = append(art.Parts, a2a.NewTextPart(p.Text))
		}
		out.Artifacts = append(out.Artifacts, art)
	}
	return out, true
}
