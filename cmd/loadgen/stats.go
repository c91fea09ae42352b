package main

import (
	"fmt"
	"io"
	"slices"
	"text/tabwriter"
	"time"
)

// result is one load run's figures. Durations are in milliseconds.
type result struct {
	Mode        string  `json:"mode"`
	Proto       string  `json:"proto,omitempty"`
	Target      string  `json:"target"`
	Baseline    bool    `json:"baseline"`
	Concurrency int     `json:"concurrency"`
	ElapsedSec  float64 `json:"elapsed_s"`
	// Requests counts completed requests (send) or streams (stream, latency,
	// idle: streams opened).
	Requests int64 `json:"requests"`
	Errors   int64 `json:"errors"`
	// FirstError is the first error seen, for the operator.
	FirstError string `json:"first_error,omitempty"`
	// Throughput is req/s (send) or delta events/s in total (stream,
	// latency).
	Throughput float64 `json:"throughput"`
	Unit       string  `json:"unit"`
	Events     int64   `json:"events,omitempty"`

	Latency       *percentiles `json:"latency_ms,omitempty"`
	FirstDelta    *percentiles `json:"first_delta_ms,omitempty"`
	DeltaToSocket *percentiles `json:"delta_to_socket_ms,omitempty"`

	// With -server-pid in send, stream and latency modes: the CPU time the
	// server used during the load, as a fraction of the elapsed time (1 is
	// one core saturated; a server well below its cores is not the
	// bottleneck), and per request (send) or per delta event.
	ServerCPUSec float64 `json:"server_cpu_s,omitempty"`
	ServerBusy   float64 `json:"server_busy,omitempty"`
	ServerCPUPer float64 `json:"server_cpu_us_per_op,omitempty"`

	RSSBeforeKiB int64   `json:"rss_before_kib,omitempty"`
	RSSAfterKiB  int64   `json:"rss_after_kib,omitempty"`
	KiBPerStream float64 `json:"kib_per_stream,omitempty"`
}

// percentiles summarise a latency sample, in milliseconds.
type percentiles struct {
	Count int     `json:"count"`
	P50   float64 `json:"p50"`
	P90   float64 `json:"p90"`
	P99   float64 `json:"p99"`
	Max   float64 `json:"max"`
}

// summarise sorts sample in place and returns its percentiles (nearest
// rank), or nil for an empty sample.
func summarise(sample []time.Duration) *percentiles {
	if len(sample) == 0 {
		return nil
	}
	slices.Sort(sample)
	at := func(q float64) float64 {
		i := int(q*float64(len(sample))+0.5) - 1
		i = max(0, min(i, len(sample)-1))
		return ms(sample[i])
	}
	return &percentiles{Count: len(sample), P50: at(0.50), P90: at(0.90), P99: at(0.99), Max: ms(sample[len(sample)-1])}
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// merge concatenates the workers' samples.
func merge(parts [][]time.Duration) []time.Duration {
	n := 0
	for _, p := range parts {
		n += len(p)
	}
	out := make([]time.Duration, 0, n)
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// print writes the result as a compact table.
func (r result) print(w io.Writer) error {
	server := "agentd"
	if r.Proto == "a2a" {
		server = "agentd, A2A JSON-RPC"
	}
	if r.Baseline {
		server = "baseline"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "mode\t%s (%s, %s)\n", r.Mode, server, r.Target)
	fmt.Fprintf(tw, "concurrency\t%d\n", r.Concurrency)
	fmt.Fprintf(tw, "elapsed\t%.2fs\n", r.ElapsedSec)
	fmt.Fprintf(tw, "requests\t%d (errors %d)\n", r.Requests, r.Errors)
	if r.FirstError != "" {
		fmt.Fprintf(tw, "first error\t%s\n", r.FirstError)
	}
	if r.Unit != "" {
		fmt.Fprintf(tw, "throughput\t%.0f %s\n", r.Throughput, r.Unit)
	}
	if r.Events > 0 {
		fmt.Fprintf(tw, "events\t%d\n", r.Events)
	}
	if r.Latency != nil || r.FirstDelta != nil || r.DeltaToSocket != nil {
		fmt.Fprintf(tw, "\tcount\tp50\tp90\tp99\tmax\n")
	}
	for _, row := range []struct {
		name string
		p    *percentiles
	}{{r.latencyName(), r.Latency}, {"first delta ms", r.FirstDelta}, {"delta→socket ms", r.DeltaToSocket}} {
		if row.p != nil {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\n", row.name, row.p.Count, row.p.P50, row.p.P90, row.p.P99, row.p.Max)
		}
	}
	if r.ServerCPUSec > 0 {
		per := "request"
		if r.Mode != "send" {
			per = "delta event"
		}
		fmt.Fprintf(tw, "server CPU\t%.2fs (%.2f of a core), %.2f µs per %s\n", r.ServerCPUSec, r.ServerBusy, r.ServerCPUPer, per)
	}
	if r.RSSAfterKiB > 0 {
		fmt.Fprintf(tw, "server RSS\t%d KiB → %d KiB\n", r.RSSBeforeKiB, r.RSSAfterKiB)
		fmt.Fprintf(tw, "per stream\t%.1f KiB\n", r.KiBPerStream)
	}
	return tw.Flush()
}

// latencyName names the Latency row: the schedule mode's is the firing
// delay.
func (r result) latencyName() string {
	if r.Mode == "schedule" {
		return "firing delay ms"
	}
	return "latency ms"
}

// errorLog counts errors and keeps the first.
type errorLog struct {
	n     int64
	first error
}

func (e *errorLog) add(err error) {
	if e.first == nil {
		e.first = err
	}
	e.n++
}

// mergeErrors folds the workers' error logs into r.
// serverCPU records the server's CPU time over the load.
func (r *result) serverCPU(cpu time.Duration) {
	r.ServerCPUSec = cpu.Seconds()
	if r.ElapsedSec > 0 {
		r.ServerBusy = r.ServerCPUSec / r.ElapsedSec
	}
	ops := r.Requests
	if r.Mode != "send" {
		ops = r.Events
	}
	if ops > 0 {
		r.ServerCPUPer = float64(cpu) / float64(time.Microsecond) / float64(ops)
	}
}

func (r *result) mergeErrors(logs []errorLog) {
	for _, l := range logs {
		r.Errors += l.n
		if r.FirstError == "" && l.first != nil {
			r.FirstError = l.first.Error()
		}
	}
}
