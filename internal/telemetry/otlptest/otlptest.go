// Package otlptest is an OTLP/HTTP trace receiver for tests and
// benchmarks: it listens on loopback, decodes what exporters send
// (protobuf, optionally gzip), and keeps the spans, flattened. It is the
// fake of a true external boundary — an OpenTelemetry collector — and
// speaks its wire format.
//
// Imports: none.
package otlptest

import (
	"compress/gzip"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"

	coltrace "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
)

// Span is a received span, with what tests look at.
type Span struct {
	Service  string
	TraceID  string
	SpanID   string
	ParentID string
	Name     string
	Attrs    map[string]string
	// Error says the span's status is an error.
	Error bool
}

// Receiver collects spans sent to URL()+"/v1/traces".
type Receiver struct {
	srv *httptest.Server
	// Keep, when false, counts spans without keeping them (benchmarks).
	keep bool

	mu    sync.Mutex
	spans []Span
	count int
	wake  chan struct{}
}

// New starts a receiver; keep says whether it keeps the spans (tests) or
// only counts them (benchmarks). Close it when done.
func New(keep bool) *Receiver {
	r := &Receiver{keep: keep, wake: make(chan struct{})}
	r.srv = httptest.NewServer(http.HandlerFunc(r.export))
	return r
}

// URL is the receiver's base URL, for OTEL_EXPORTER_OTLP_ENDPOINT.
func (r *Receiver) URL() string { return r.srv.URL }

// Close stops the receiver.
func (r *Receiver) Close() { r.srv.Close() }

// Count is the number of spans received.
func (r *Receiver) Count() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Spans returns the spans kept so far, and a channel closed at the next
// export.
func (r *Receiver) Spans() ([]Span, <-chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Span(nil), r.spans...), r.wake
}

func (r *Receiver) export(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.Error(w, "want POST /v1/traces", http.StatusNotFound)
		return
	}
	var body io.Reader = req.Body
	if req.Header.Get("Content-Encoding") == "gzip" {
		zr, err := gzip.NewReader(req.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		body = zr
	}
	b, err := io.ReadAll(body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltrace.ExportTraceServiceRequest
	if err := proto.Unmarshal(b, &msg); err != nil {
		http.Error(w, "not an ExportTraceServiceRequest: "+err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&msg)
	out, _ := proto.Marshal(&coltrace.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

func (r *Receiver) add(msg *coltrace.ExportTraceServiceRequest) {
	var got []Span
	n := 0
	for _, rs := range msg.GetResourceSpans() {
		service := ""
		for _, kv := range rs.GetResource().GetAttributes() {
			if kv.GetKey() == "service.name" {
				service = kv.GetValue().GetStringValue()
			}
		}
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				n++
				if !r.keep {
					continue
				}
				sp := Span{
					Service: service, Name: s.GetName(), Attrs: map[string]string{},
					TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					ParentID: hex.EncodeToString(s.GetParentSpanId()),
					Error:    s.GetStatus().GetCode() == 2, // STATUS_CODE_ERROR
				}
				for _, kv := range s.GetAttributes() {
					sp.Attrs[kv.GetKey()] = valueString(kv.GetValue())
				}
				got = append(got, sp)
			}
		}
	}
	r.mu.Lock()
	r.spans = append(r.spans, got...)
	r.count += n
	close(r.wake)
	r.wake = make(chan struct{})
	r.mu.Unlock()
}
