package main

import (
	"encoding/json"
	"net/http"
	"strconv"
	"time"
)

// sendAnswer is agentd's blocking answer to {"text":"hello world"} for the
// echo agent, captured once: same members, same size (642 bytes).
const sendAnswer = `{"id":"01a20253-c928-74d4-8020-de60a574e10f","context_id":"01a20253-c928-74cf-8527-df1c6a64fb68","agent_id":"echo","status":"completed","messages":[{"id":"01a20253-c928-74ca-9ebb-2338f939b323","role":"user","parts":[{"type":"text","text":"hello world"}],"created_at":"2026-11-22T08:16:15.144314Z"},{"id":"01a20253-c928-7b43-ac80-5d78d25d1cb6","role":"assistant","parts":[{"type":"text","text":"hello world"}],"name":"echo","created_at":"2026-11-22T08:16:15.144683Z"}],"usage":{"input_tokens":2,"output_tokens":2,"total_tokens":4},"error":null,"attempt":1,"created_at":"2026-11-22T08:16:15.144315Z","updated_at":"2026-11-22T08:16:15.144781Z"}` + "\n"

// runID is the run id the canned stream events carry.
const runID = "01a20253-c933-7589-9ba3-3286dbd883af"

// maxEvents bounds /stream?n= so one request cannot run away.
const maxEvents = 1_000_000

func newHandler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /send", send)
	mux.HandleFunc("GET /stream", stream)
	mux.HandleFunc("GET /idle", idle)
	return mux
}

// send decodes the request like any JSON handler would, then answers the
// canned run.
func send(w http.ResponseWriter, r *http.Request) {
	var body struct {
		Text string `json:"text"`
	}
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20)).Decode(&body); err != nil || body.Text == "" {
		http.Error(w, `{"title":"want {\"text\": \"…\"}"}`, http.StatusBadRequest)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Location", "/v1/runs/01a20253-c928-74d4-8020-de60a574e10f")
	_, _ = w.Write([]byte(sendAnswer))
}

// stream writes n delta events shaped like agentd's (each stamped with the
// time it was written), flushing after every event as a bare SSE handler
// does, then a run.end event, and closes.
func stream(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	n, err := strconv.Atoi(q.Get("n"))
	if err != nil || n < 0 || n > maxEvents {
		http.Error(w, "n: want an event count from 0 to 1000000", http.StatusBadRequest)
		return
	}
	var every time.Duration
	if v := q.Get("every"); v != "" {
		if every, err = time.ParseDuration(v); err != nil || every < 0 || every > time.Minute {
			http.Error(w, "every: want a duration from 0 to 1m", http.StatusBadRequest)
			return
		}
	}
	sseHeaders(w)
	rc := http.NewResponseController(w)
	buf := make([]byte, 0, 512)
	buf = append(buf, ": stream open\n\n"...)
	due := time.Now()
	for i := 1; i <= n+1; i++ {
		if every > 0 && i > 1 && i <= n {
			due = due.Add(every)
			if d := time.Until(due); d > 0 {
				select {
				case <-time.After(d):
				case <-r.Context().Done():
					return
				}
			}
		}
		typ := "delta"
		if i == n+1 {
			typ = "run.end"
		}
		buf = appendEvent(buf, int64(i), typ, time.Now())
		if _, err := w.Write(buf); err != nil {
			return
		}
		if rc.Flush() != nil {
			return
		}
		buf = buf[:0]
	}
}

// appendEvent appends one SSE event of agentd's delta shape.
func appendEvent(b []byte, seq int64, typ string, at time.Time) []byte {
	b = append(b, "id: "...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\nevent: "...)
	b = append(b, typ...)
	b = append(b, "\ndata: {\"run_id\":\""+runID+"\",\"seq\":"...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, `,"type":"`...)
	b = append(b, typ...)
	b = append(b, `","time":"`...)
	b = at.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","actor":"echo","text":" tok`...)
	b = strconv.AppendInt(b, seq, 10)
	b = append(b, "\"}\n\n"...)
	return b
}

// idle opens an SSE stream, flushes its headers and a comment, and holds it
// silently until the client leaves or the server stops.
func idle(w http.ResponseWriter, r *http.Request) {
	sseHeaders(w)
	_, _ = w.Write([]byte(": stream open\n\n"))
	if http.NewResponseController(w).Flush() != nil {
		return
	}
	<-r.Context().Done()
}

func sseHeaders(w http.ResponseWriter) {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	h.Set("Connection", "keep-alive")
	w.WriteHeader(http.StatusOK)
}
