// Command server runs agentd: it reads the configuration, opens the store,
// starts the runtime and serves the REST + SSE API and the A2A endpoints
// until SIGINT or SIGTERM, then drains.
package main

import (
	"agentd"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/go-chi/chi/v5"

	"agentd/internal/api"
	"agentd/internal/config"
	"agentd/internal/logctx"
	"agentd/internal/runtime"
	"agentd/internal/store"
	"agentd/internal/store/memstore"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Getenv, os.Stderr, nil); err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "agentd:", err)
		os.Exit(exitCode(err))
	}
}

// errUsage marks command-line mistakes (exit status 2).
var errUsage = errors.New("usage")

func exitCode(err error) int {
	if errors.Is(err, errUsage) {
		return 2
	}
	return 1
}

// flags are the command-line options.
type flags struct {
	addr           string
	configPath     string
	logLevel       string
	logFormat      string
	allowNoAuth    bool
	printConfig    bool
	writeDemoDir   string
	shutdownTimout time.Duration
	debugAddr      string
}

func parseFlags(args []string, stderr io.Writer) (flags, error) {
	var f flags
	fs := flag.NewFlagSet("server", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprint(stderr, `Usage:
  server [flags]                     serve (the embedded demo configuration unless --config)
  server validate FILE...            check configuration, workflow and flow files, then exit
  server healthcheck [--url URL]     probe a running server's /healthz (the container's HEALTHCHECK)

Flags:
`)
		fs.PrintDefaults()
	}
	fs.StringVar(&f.addr, "addr", "", "listen address (default: the config's server.addr, else 127.0.0.1:8080)")
	fs.StringVar(&f.configPath, "config", "", "configuration file (default: the embedded demo configuration)")
	fs.StringVar(&f.logLevel, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&f.logFormat, "log-format", "text", "log format: text or json")
	fs.BoolVar(&f.allowNoAuth, "allow-unauthenticated", false, "allow listening beyond loopback without authentication")
	fs.BoolVar(&f.printConfig, "print-demo-config", false, "print the embedded demo configuration and exit")
	fs.StringVar(&f.writeDemoDir, "write-demo-config", "", "write the demo configuration and the files it refers to (its flows) into this directory and exit")
	fs.DurationVar(&f.shutdownTimout, "shutdown-timeout", 0, "how long to drain on SIGTERM (default: the config's server.shutdown_timeout, else 30s)")
	fs.StringVar(&f.debugAddr, "debug-addr", "", "serve Go's /debug/pprof/ profiles on this loopback address (default: off)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return f, err // the usage is printed: exit 0
		}
		return f, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() > 0 {
		return f, fmt.Errorf("%w: unexpected argument %q", errUsage, fs.Arg(0))
	}
	return f, nil
}

func newLogger(f flags, w io.Writer) (*slog.Logger, error) {
	var level slog.Level
	if err := level.UnmarshalText([]byte(f.logLevel)); err != nil {
		return nil, fmt.Errorf("%w: --log-level: %q is not debug, info, warn or error", errUsage, f.logLevel)
	}
	opts := &slog.HandlerOptions{Level: level}
	switch f.logFormat {
	case "text":
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case "json":
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("%w: --log-format: %q is not text or json", errUsage, f.logFormat)
}

// run is main without the process: it serves until ctx ends. ready, when
// non-nil, receives the bound address once the server listens.
func run(ctx context.Context, args []string, getenv func(string) string, stderr io.Writer, ready chan<- string) error {
	if len(args) > 0 && args[0] == "validate" {
		return validateCommand(args[1:], os.Stdout)
	}
	if len(args) > 0 && args[0] == "healthcheck" {
		return healthcheckCommand(args[1:], stderr)
	}
	f, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	if f.printConfig {
		_, err := fmt.Fprintf(os.Stdout, "%s%s", printedDemoNote, config.Demo())
		return err
	}
	if f.writeDemoDir != "" {
		path, err := config.WriteDemo(f.writeDemoDir, nil)
		if err == nil {
			fmt.Fprintf(stderr, "wrote %s and the files it refers to; start with --config %s\n", path, path)
		}
		return err
	}
	log, err := newLogger(f, stderr)
	if err != nil {
		return err
	}
	cfg, err := config.Load(f.configPath)
	if err != nil {
		return err
	}
	tel, log, err := startTelemetry(ctx, cfg, getenv, log)
	if err != nil {
		return err
	}
	defer stopTelemetry(tel, log)
	addr := f.addr
	if addr == "" {
		addr = cfg.Server.Addr
	}
	if addr == "" {
		addr = "127.0.0.1:8080"
	}
	authn, err := cfg.Authenticator(getenv)
	if err != nil {
		return err
	}
	if err := checkExposure(addr, f.allowNoAuth || authn != nil); err != nil {
		return err
	}
	if f.debugAddr != "" {
		stopDebug, err := serveDebug(f.debugAddr, log)
		if err != nil {
			return err
		}
		defer stopDebug()
	}
	st, err := openStore(ctx, cfg, getenv, log)
	if err != nil {
		return err
	}
	defer st.Close()
	mem, memTools, err := newMemory(st, cfg, getenv) // memory.go
	if err != nil {
		return err
	}
	var self selfURL // known once the server listens; remote agents' relative peers use it
	agents, err := cfg.Build(config.BuildOptions{Getenv: getenv, SelfURL: self.get, Memory: memTools})
	defer func() { _ = cfg.Close() }() // the MCP servers' sessions, once the runtime is done
	if err != nil {
		return err
	}
	rt, err := runtime.New(runtime.Options{
		Store: tel.Store(st), Agents: agents, Logger: log, Observer: tel.Observer(),
		CancelGrace: cfg.Server.CancelGrace.Or(5 * time.Second),
		FlushWindow: flushWindow(st),
		LeaseTTL:    cfg.Server.LeaseTTL.Or(runtime.DefaultLeaseTTL),
		OutageBound: cfg.Server.OutageBound.Or(runtime.DefaultOutageBound),
		Owners:      ownerProbe(st), // outage.go
		Prices:      cfg.RuntimePrices(),
		CallTree:    cfg.CallTreeLimits(),
	})
	if err != nil {
		return err
	}
	stopListening := listenForWakeups(ctx, st, rt, log)
	defer stopListening()

	router := chi.NewRouter()
	router.NotFound(api.NotFoundHandler)
	router.MethodNotAllowed(api.MethodNotAllowedHandler)
	api.New(rt, api.Options{
		MaxBodyBytes: cfg.Server.MaxBodyBytes,
		Heartbeat:    cfg.Server.Heartbeat.Or(15 * time.Second),
		Ready:        st.Ping,
		OpenAPI:      agentd.OpenAPI,
		Store:        storeName(getenv),
		Memory:       mem,
		Logger:       log,
	}).Mount(router)
	mountUI(router, rt, cfg, log)
	lg := mountAgentProto(router, rt, st, mem, cfg, log)
	stopPush, err := mountA2A(router, rt, st, cfg, tel.Metrics, log, lg.WebhookBody)
	if err != nil {
		return err
	}
	defer stopPush() // before the store closes: it hands claims over
	defer mountMCP(router, rt, cfg, log)()
	stopMetrics, err := exposeMetrics(router, cfg, tel, log)
	if err != nil {
		return err
	}
	defer stopMetrics()
	stopRetention, err := startRetention(st, cfg, tel, log)
	if err != nil {
		return err
	}
	defer stopRetention()
	handler, err := protect(router, cfg, authn, rt, log)
	if err != nil {
		return err
	}
	handler = withConsole(handler)
	if tel.Tracing() {
		// The error writers log a request's failure with its trace.
		handler = logctx.Middleware(log, handler)
	}

	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	self.set(cfg.Server.PublicURL, ln.Addr())
	handler, stopLiveness := serveLiveness(handler, st, rt, cfg, ln.Addr(), log) // outage.go
	defer stopLiveness()
	// Handlers see baseCtx end when the drain is over, so that long
	// streams close and Shutdown can finish.
	baseCtx, cancelBase := context.WithCancel(context.Background())
	defer cancelBase()
	srv := &http.Server{
		Handler:           tel.Handler(handler),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		BaseContext:       func(net.Listener) context.Context { return baseCtx },
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	log.Info("agentd listening", "addr", ln.Addr().String(), "agents", rt.AgentIDs(), "store", storeName(getenv))
	if ready != nil {
		ready <- ln.Addr().String()
	}

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	timeout := f.shutdownTimout
	if timeout == 0 {
		timeout = cfg.Server.ShutdownTimeout.Or(30 * time.Second)
	}
	log.Info("draining", "timeout", timeout)
	drainCtx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	shutdownDone := make(chan error, 1)
	go func() { shutdownDone <- srv.Shutdown(drainCtx) }() // stop accepting at once
	if err := rt.Shutdown(drainCtx); err != nil {
		log.Warn("runtime drain", "err", err)
	}
	cancelBase() // end open streams
	if err := <-shutdownDone; err != nil && !errors.Is(err, context.DeadlineExceeded) {
		log.Warn("http shutdown", "err", err)
	}
	log.Info("stopped")
	return nil
}

// printedDemoNote heads the printed demo configuration: it refers to files
// (the refund agent's flow directory) that printing cannot carry.
const printedDemoNote = `# agentd's embedded demo configuration, for reading. It refers to files
# beside it (the refund agent's flow, flows/refund/*.md) that are not
# printed here: to start a server from it, write it with its files by
#   bin/server --write-demo-config DIR && bin/server --config DIR/agentd.yaml
`

// checkExposure refuses to listen beyond loopback without authentication
// unless explicitly allowed.
func checkExposure(addr string, allow bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%w: --addr %q: %v", errUsage, addr, err)
	}
	if allow || loopback(host) {
		return nil
	}
	return fmt.Errorf("%w: --addr %q listens beyond loopback and agentd has no authentication configured; pass --allow-unauthenticated to do it anyway", errUsage, addr)
}

// loopback reports whether host names this machine only.
func loopback(host string) bool {
	ip := net.ParseIP(host)
	return host == "localhost" || (ip != nil && ip.IsLoopback())
}

func storeName(getenv func(string) string) string {
	if getenv("DATABASE_URL") != "" {
		return "postgres"
	}
	return "memory"
}

// openStore opens PostgreSQL when DATABASE_URL is set, else the embedded
// in-memory store.
func openStore(ctx context.Context, cfg *config.Config, getenv func(string) string, log *slog.Logger) (store.Store, error) {
	if dsn := getenv("DATABASE_URL"); dsn != "" {
		return openPostgres(ctx, dsn, cfg.MemoryVectorExtension(), log)
	}
	log.Info("using the embedded in-memory store (data is lost on exit; set DATABASE_URL for PostgreSQL)")
	return memstore.New(), nil
}
