package limits

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"agentd/internal/auth"
	"agentd/internal/run"
)

// MaxJSONDepth is the deepest nesting a request may have at most: the
// faces refuse anything deeper whatever the configuration says.
const MaxJSONDepth = 64

// Defaults of the server-wide limits.
const (
	DefaultMaxStreams = 10000
	DefaultMaxParts   = 100
	DefaultMaxBody    = 1 << 20
)

// Options configure a Limiter; zero per-tenant limits are off.
type Options struct {
	RequestsPerSecond float64
	Burst             int
	ConcurrentRuns    int
	StreamsPerTenant  int
	MaxStreams        int
	MaxJSONDepth      int
	MaxParts          int
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// Runs counts a tenant's active runs (the runtime); required when
	// ConcurrentRuns is set.
	Runs RunLister
	Now  func() time.Time
}

// RunLister lists the tasks of the tenant in ctx (runtime.Runtime does).
type RunLister interface {
	ListTasks(ctx context.Context, q run.TaskQuery) (run.TaskPage, error)
}

// Limiter enforces the limits at the HTTP edge.
type Limiter struct {
	o       Options
	rate    *buckets // nil: no rate limit
	streams atomic.Int64

	mu        sync.Mutex
	perTenant map[string]int // open streams by tenant
}

// New returns a Limiter with o's defaults filled in.
func New(o Options) (*Limiter, error) {
	if o.ConcurrentRuns > 0 && o.Runs == nil {
		return nil, errors.New("limits: concurrent_runs needs a run lister")
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = DefaultMaxStreams
	}
	if o.MaxJSONDepth == 0 || o.MaxJSONDepth > MaxJSONDepth {
		o.MaxJSONDepth = MaxJSONDepth
	}
	if o.MaxParts == 0 {
		o.MaxParts = DefaultMaxParts
	}
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBody
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &Limiter{o: o, perTenant: map[string]int{}}
	if o.RequestsPerSecond > 0 {
		burst := float64(o.Burst)
		if burst <= 0 {
			burst = math.Max(1, math.Ceil(o.RequestsPerSecond))
		}
		l.rate = &buckets{rate: o.RequestsPerSecond, burst: burst, now: o.Now, m: map[string]*bucket{}}
	}
	return l, nil
}

// OpenStreams is the number of event streams open now.
func (l *Limiter) OpenStreams() int { return int(l.streams.Load()) }

// Middleware refuses what is over a limit and passes the rest on. Streams
// are counted until the handler returns.
func (l *Limiter) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if auth.Public(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		tenant := run.TenantFrom(r.Context())
		if l.rate != nil {
			if ok, wait := l.rate.take(tenant); !ok {
				tooMany(fmt.Sprintf("tenant %s is over its rate of %v requests a second", tenant, l.o.RequestsPerSecond), wait).Write(w, r)
				return
			}
		}
		k, refusal := l.admitBody(r)
		if refusal != nil {
			refusal.Write(w, r)
			return
		}
		if k.run && l.o.ConcurrentRuns > 0 {
			if f := l.admitRun(r.Context(), tenant); f != nil {
				f.Write(w, r)
				return
			}
		}
		if k.stream {
			release, f := l.openStream(tenant)
			if f != nil {
				f.Write(w, r)
				return
			}
			defer release()
		}
		next.ServeHTTP(w, r)
	})
}

// admitBody reads a POST body (bounded) to check its shape and, for A2A
// JSON-RPC, its method; the body is handed on unchanged.
func (l *Limiter) admitBody(r *http.Request) (kind, *auth.Refusal) {
	k := classifyURL(r)
	if r.Method != http.MethodPost || r.Body == nil || r.Body == http.NoBody {
		return k, nil
	}
	body, err := readBody(r.Body, r.ContentLength, l.o.MaxBodyBytes)
	_ = r.Body.Close()
	r.Body = io.NopCloser(bytes.NewReader(body))
	switch {
	case err != nil:
		return k, &auth.Refusal{Status: http.StatusBadRequest, Class: "validation", Title: "Invalid request",
			Detail: "reading the request body failed"}
	case int64(len(body)) > l.o.MaxBodyBytes:
		return k, &auth.Refusal{Status: http.StatusRequestEntityTooLarge, Class: "payload_too_large", Title: "Request body too large",
			Detail: fmt.Sprintf("request body exceeds the limit of %d bytes (limits: server.max_body_bytes)", l.o.MaxBodyBytes)}
	}
	sh := scanBody(body, l.o.MaxJSONDepth)
	switch {
	case sh.depth > l.o.MaxJSONDepth:
		return k, badShape(fmt.Sprintf("request JSON nests more than %d levels deep (limits.max_json_depth)", l.o.MaxJSONDepth))
	case sh.maxParts > l.o.MaxParts:
		return k, badShape(fmt.Sprintf("a message has %d parts; at most %d are allowed (limits.max_parts)", sh.maxParts, l.o.MaxParts))
	}
	if auth.RouteFamily(r.URL.Path) == auth.FamilyJSONRPC {
		k = classifyMethod(sh.method)
	} else if mcpPath(r.URL.Path) {
		k = classifyMCPMethod(sh.method)
	}
	return k, nil
}

// readBody reads body, or limit+1 bytes of it if it is longer. A declared
// length within the limit sizes the buffer once (net/http never reads past
// it); io.ReadAll would start small and grow it.
func readBody(body io.Reader, declared, limit int64) ([]byte, error) {
	if declared <= 0 || declared > limit {
		return io.ReadAll(io.LimitReader(body, limit+1))
	}
	buf := make([]byte, declared)
	_, err := io.ReadFull(body, buf)
	return buf, err
}

func badShape(msg string) *auth.Refusal {
	return &auth.Refusal{Status: http.StatusBadRequest, Class: "validation", Title: "Invalid request", Detail: msg}
}

func tooMany(msg string, wait time.Duration) *auth.Refusal {
	secs := int(math.Ceil(wait.Seconds()))
	return &auth.Refusal{Status: http.StatusTooManyRequests, Class: "rate_limit", Title: "Too many requests",
		Detail: msg, RetryAfter: strconv.Itoa(max(1, secs))}
}

// admitRun refuses a send while the tenant has ConcurrentRuns active runs.
func (l *Limiter) admitRun(ctx context.Context, tenant string) *auth.Refusal {
	n, err := l.activeRuns(ctx)
	if err != nil {
		return &auth.Refusal{Status: http.StatusServiceUnavailable, Class: "not_available", Title: "Not available",
			Detail: "cannot count the tenant's active runs now; retry", RetryAfter: "2"}
	}
	if n >= l.o.ConcurrentRuns {
		return tooMany(fmt.Sprintf("tenant %s has %d active runs, its limit (limits.concurrent_runs); retry when one ends", tenant, n), time.Second)
	}
	return nil
}

// activeRuns counts the submitted and working runs of ctx's tenant, up to
// the limit.
func (l *Limiter) activeRuns(ctx context.Context) (int, error) {
	q := run.TaskQuery{States: []run.TaskState{run.StateSubmitted, run.StateWorking}, Limit: min(100, l.o.ConcurrentRuns)}
	n := 0
	for {
		page, err := l.o.Runs.ListTasks(ctx, q)
		if err != nil {
			return 0, err
		}
		n += len(page.Tasks)
		if n >= l.o.ConcurrentRuns || page.NextCursor == "" {
			return n, nil
		}
		q.Cursor = page.NextCursor
	}
}

// openStream takes a stream slot of the server and of tenant.
func (l *Limiter) openStream(tenant string) (func(), *auth.Refusal) {
	if n := l.streams.Add(1); n > int64(l.o.MaxStreams) {
		l.streams.Add(-1)
		return nil, &auth.Refusal{Status: http.StatusServiceUnavailable, Class: "not_available", Title: "Not available",
			Detail:     fmt.Sprintf("this server has %d event streams open, its limit (limits.max_streams); retry, or reconnect to another replica", l.o.MaxStreams),
			RetryAfter: "2"}
	}
	if max := l.o.StreamsPerTenant; max > 0 {
		l.mu.Lock()
		if l.perTenant[tenant] >= max {
			l.mu.Unlock()
			l.streams.Add(-1)
			return nil, tooMany(fmt.Sprintf("tenant %s has %d event streams open, its limit (limits.streams_per_tenant); close one first", tenant, max), time.Second)
		}
		l.perTenant[tenant]++
		l.mu.Unlock()
	}
	return func() {
		l.streams.Add(-1)
		if l.o.StreamsPerTenant > 0 {
			l.mu.Lock()
			if l.perTenant[tenant]--; l.perTenant[tenant] <= 0 {
				delete(l.perTenant, tenant)
			}
			l.mu.Unlock()
		}
	}, nil
}
