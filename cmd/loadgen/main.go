// Command loadgen drives an agentd server (or cmd/baseline, its bare
// net/http ceiling) over loopback and prints throughput and latency
// percentiles. It produces the load figures of docs/benchmarks.md.
//
// Modes:
//
//	send     closed-loop blocking POST /v1/agents/{agent}/messages
//	         {"text":"hello world"}: req/s and latency percentiles
//	stream   closed-loop POST …/messages?stream=true {"text":"stream N"}:
//	         delta events/s in total and time to the first delta
//	latency  the same with paced streams ("stream N every Dms"): the time
//	         from each delta's data.time (stamped by the server when the
//	         event was logged) to its arrival on the client's socket
//	idle     c open, silent SSE streams of one run: the server's RSS growth
//	         per stream (needs -server-pid)
//	schedule c schedules of the agent firing every second for d: the delay
//	         from each tick to its run's creation (schedule.go)
//
// -proto a2a runs the send and stream modes over A2A JSON-RPC instead
// (SendMessage, SendStreamingMessage on /agents/{agent}/jsonrpc), so that
// the A2A face is measured beside cmd/baseline the same way as REST.
//
// With -server-pid, the other modes also report the server's CPU time
// during the load: how busy it was (is the server the bottleneck, or the
// load generator?) and its CPU time per request or per delta event, a
// figure that varies less between machines than throughput does.
//
// loadgen only talks to loopback addresses, and stops by itself after -d
// or -max-requests, whichever comes first.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

// config is the command line.
type config struct {
	target      string
	mode        string
	c           int
	d           time.Duration
	n           int
	every       time.Duration
	maxRequests int64
	agent       string
	baseline    bool
	serverPID   int
	settle      time.Duration
	parked      bool
	jsonOut     bool
	apiKey      string
	proto       string
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var cfg config
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&cfg.target, "target", "http://127.0.0.1:8080", "base URL of the server (loopback only)")
	fs.StringVar(&cfg.mode, "mode", "send", "send | stream | latency | idle | schedule")
	fs.IntVar(&cfg.c, "c", 16, "concurrency: closed-loop workers, or open streams in idle mode")
	fs.DurationVar(&cfg.d, "d", 10*time.Second, "duration of the load (idle: the bound on opening the streams)")
	fs.IntVar(&cfg.n, "n", 1000, "tokens per stream (stream and latency modes)")
	fs.DurationVar(&cfg.every, "every", 5*time.Millisecond, "token pace of latency mode")
	fs.Int64Var(&cfg.maxRequests, "max-requests", 2_000_000, "hard bound on requests (streams) started")
	fs.StringVar(&cfg.agent, "agent", "echo", "agent to load")
	fs.BoolVar(&cfg.baseline, "baseline", false, "target is cmd/baseline: use its paths (/send, /stream, /idle)")
	fs.IntVar(&cfg.serverPID, "server-pid", 0, "server process to watch: its CPU time (send, stream, latency modes) or its VmRSS (idle mode)")
	fs.DurationVar(&cfg.settle, "settle", 2*time.Second, "idle mode: wait this long after the streams are open before reading RSS")
	fs.BoolVar(&cfg.parked, "parked", false, "idle mode on agentd: stream a run parked in input-required (conformance agent) instead of a running one")
	fs.BoolVar(&cfg.jsonOut, "json", false, "print the result as JSON")
	fs.StringVar(&cfg.proto, "proto", "rest", "protocol of agentd's send and stream modes: rest (POST /v1/agents/{agent}/messages), a2a (JSON-RPC SendMessage, SendStreamingMessage) or lg (the Agent Protocol face: stateless /lg/runs/wait and /lg/runs/stream, messages-tuple)")
	fs.StringVar(&cfg.apiKey, "api-key-env", "", "send the API key held by this environment variable as X-API-Key (an agentd with auth)")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	if fs.NArg() > 0 {
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	switch cfg.mode {
	case "send", "stream", "latency", "idle", "schedule":
	default:
		return cfg, fmt.Errorf("-mode %q: want send, stream, latency, idle or schedule", cfg.mode)
	}
	switch {
	case cfg.proto != "rest" && cfg.proto != "a2a" && cfg.proto != "lg":
		return cfg, fmt.Errorf("-proto %q: want rest, a2a or lg", cfg.proto)
	case cfg.proto != "rest" && (cfg.baseline || cfg.mode == "latency" || cfg.mode == "idle" || cfg.mode == "schedule"):
		return cfg, fmt.Errorf("-proto %s: only the send and stream modes of agentd (not -baseline, latency or idle)", cfg.proto)
	case cfg.c < 1 || cfg.c > 20000:
		return cfg, fmt.Errorf("-c %d: want 1 to 20000", cfg.c)
	case cfg.d <= 0 || cfg.d > time.Hour:
		return cfg, fmt.Errorf("-d %s: want a positive duration up to 1h", cfg.d)
	case cfg.n < 1 || cfg.n > 1_000_000:
		return cfg, fmt.Errorf("-n %d: want 1 to 1000000", cfg.n)
	case cfg.every < time.Millisecond || cfg.every > time.Minute:
		return cfg, fmt.Errorf("-every %s: want 1ms to 1m", cfg.every)
	case cfg.maxRequests < 1:
		return cfg, fmt.Errorf("-max-requests %d: want at least 1", cfg.maxRequests)
	case cfg.settle < 0 || cfg.settle > time.Minute:
		return cfg, fmt.Errorf("-settle %s: want 0 to 1m", cfg.settle)
	}
	cfg.target = strings.TrimRight(cfg.target, "/")
	if err := loopbackOnly(cfg.target); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// loopbackOnly refuses targets beyond this machine: loadgen is a load
// source and must never be pointed at someone else's server.
func loopbackOnly(target string) error {
	u, err := url.Parse(target)
	if err != nil || u.Scheme != "http" || u.Host == "" {
		return fmt.Errorf("-target %q: want http://127.0.0.1:PORT", target)
	}
	host := u.Hostname()
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return fmt.Errorf("-target %q: loadgen only loads loopback addresses", target)
	}
	return nil
}

// run is main without the process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	cfg, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	client := newClient(cfg.c)
	defer client.CloseIdleConnections()
	if cfg.apiKey != "" {
		client.Transport = keyed{key: os.Getenv(cfg.apiKey), next: client.Transport}
	}
	var cpu0 time.Duration
	watchCPU := cfg.serverPID > 0 && cfg.mode != "idle"
	if watchCPU {
		if cpu0, err = readCPU(cfg.serverPID); err != nil {
			return err
		}
	}
	var res result
	switch cfg.mode {
	case "send":
		res, err = runSend(ctx, cfg, client)
	case "stream", "latency":
		res, err = runStream(ctx, cfg, client)
	case "idle":
		res, err = runIdle(ctx, cfg, client)
	case "schedule":
		res, err = runSchedule(ctx, cfg, client)
	}
	if err != nil {
		return err
	}
	if watchCPU {
		cpu1, err := readCPU(cfg.serverPID)
		if err != nil {
			return err
		}
		res.serverCPU(cpu1 - cpu0)
	}
	if cfg.jsonOut {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(res)
	}
	return res.print(stdout)
}

// newClient keeps one connection per worker alive between requests, and
// never compresses (the servers do not either).
func newClient(c int) *http.Client {
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: -1}).DialContext,
		MaxIdleConns:        c + 16,
		MaxIdleConnsPerHost: c + 16,
		IdleConnTimeout:     30 * time.Second,
		DisableCompression:  true,
		ForceAttemptHTTP2:   false,
	}
	return &http.Client{Transport: tr}
}

// keyed presents an API key on every request.
type keyed struct {
	key  string
	next http.RoundTripper
}

func (k keyed) RoundTrip(r *http.Request) (*http.Response, error) {
	r.Header.Set("X-API-Key", k.key) // loadgen's requests are its own: no clone needed
	return k.next.RoundTrip(r)
}

func (k keyed) CloseIdleConnections() {
	if c, ok := k.next.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// errStatus reports an unexpected HTTP answer with the start of its body.
func errStatus(resp *http.Response) error {
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 300))
	return fmt.Errorf("%s: %s", resp.Status, strings.TrimSpace(string(b)))
}

// canceled says a failed request only met the end of the load (the
// deadline or an interrupt), which is not an error of the server.
func canceled(ctx context.Context) bool { return ctx.Err() != nil }
