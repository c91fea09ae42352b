package tool

import (
	"context"
	"fmt"
	"runtime/debug"
	"sync"

	"agentd/internal/errdefs"
)

// Execute runs one call and always returns a Result, never panics: an
// unknown tool, malformed or schema-violating arguments, an error returned by
// the tool, a panic inside it, or a context already done each become an
// error result whose content names the tool and says what to fix
// ("calculator: argument /expression: missing property"), with the
// classified cause in Result.Err.
//
// Arguments are validated against the schema compiled at registration before
// the tool sees them. The tool's context carries the call (CallFromContext).
func (r *Registry) Execute(ctx context.Context, call Call) Result {
	e, ok := r.lookup(call.Name)
	if !ok {
		return r.unknown(call.Name)
	}
	return r.run(ctx, e, call)
}

// ExecuteAll runs a turn's calls and returns their results in call order.
// Consecutive parallel-safe calls run concurrently, at most MaxParallel at a
// time; any other call runs alone, after every earlier call has finished and
// before any later one starts, so side effects happen in the order the model
// asked for them. Once ctx is done, calls not yet started get an error
// result saying they were not run.
//
// ExecuteAll returns when every call it started has returned: a tool that
// ignores its context delays it.
func (r *Registry) ExecuteAll(ctx context.Context, calls []Call) []Result {
	results := make([]Result, len(calls))
	entries := make([]*entry, len(calls))
	for i, c := range calls {
		entries[i], _ = r.lookup(c.Name)
	}
	// Unknown tools answer at once without side effects, so they never need
	// to run alone.
	parallel := func(i int) bool { return entries[i] == nil || entries[i].spec.Flags.ParallelSafe }
	for i := 0; i < len(calls); {
		j := i + 1
		if parallel(i) {
			for j < len(calls) && parallel(j) {
				j++
			}
		}
		if j-i == 1 {
			results[i] = r.run(ctx, entries[i], calls[i])
		} else {
			r.runConcurrently(ctx, entries[i:j], calls[i:j], results[i:j])
		}
		i = j
	}
	return results
}

// runConcurrently runs one batch of parallel-safe calls. A slot is taken
// before each goroutine starts, so when ctx ends while the batch waits for a
// slot the remaining calls are reported as not run instead of started.
func (r *Registry) runConcurrently(ctx context.Context, entries []*entry, calls []Call, results []Result) {
	limit := r.MaxParallel
	if limit <= 0 {
		limit = DefaultMaxParallel
	}
	slots := make(chan struct{}, limit)
	var wg sync.WaitGroup
	defer wg.Wait()
	for i := range calls {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			results[i] = notRun(ctx, calls[i].Name)
			continue
		}
		wg.Go(func() {
			defer func() { <-slots }()
			results[i] = r.run(ctx, entries[i], calls[i])
		})
	}
}

// run executes a call whose entry was looked up already (nil: unknown).
func (r *Registry) run(ctx context.Context, e *entry, c Call) Result {
	if e == nil {
		return r.unknown(c.Name)
	}
	return capResult(e.execute(ctx, c), r.MaxResultBytes)
}

func (e *entry) execute(ctx context.Context, call Call) Result {
	name := e.spec.Name
	if ctx.Err() != nil {
		return notRun(ctx, name)
	}
	args, err := parseArguments(e.schema, call.Arguments)
	if err != nil {
		return failure(name, err)
	}
	return e.invoke(ContextWithCall(ctx, call), args)
}

// invoke calls the tool, turning a returned error or a panic into a result.
func (e *entry) invoke(ctx context.Context, args []byte) (res Result) {
	name := e.spec.Name
	defer func() {
		if v := recover(); v != nil {
			res = Result{
				Content: fmt.Sprintf("%s: tool failed unexpectedly: %v", name, v),
				IsError: true,
				Err:     errdefs.Internalf("tool %q panicked: %v\n%s", name, v, debug.Stack()),
			}
		}
	}()
	res, err := e.tool.Execute(ctx, args)
	if err != nil {
		return failure(name, err)
	}
	return res
}

func (r *Registry) unknown(name string) Result {
	return failure(name, errdefs.NotFoundf("unknown tool %q (available: %s)", name, r.available()))
}

// notRun is the result of a call skipped because ctx ended first; its class
// follows the context's (Aborted when cancelled, Timeout past a deadline).
func notRun(ctx context.Context, name string) Result {
	err := errdefs.New(errdefs.ClassOf(ctx.Err()), fmt.Errorf("not run: %w", context.Cause(ctx)))
	return failure(name, err)
}

func failure(name string, err error) Result {
	return Result{Content: name + ": " + ModelText(err), IsError: true, Err: err}
}

// ModelText is what a model (and the transcript, and a client) reads of a
// tool's error: its message, except for a dependency that cannot be
// reached (NotAvailable, not marked errdefs.Public), whose message names
// an address or a dial error — that stays in Result.Err, inside the
// server, and the model reads a sentence that names nothing internal.
func ModelText(err error) string {
	if errdefs.ClassOf(err) == errdefs.ClassNotAvailable && !errdefs.IsPublic(err) {
		return "unavailable right now: a service it depends on cannot be reached; try again later or do without it"
	}
	return err.Error()
}

// PublicErr is what a failed call's step.error tells the run's readers:
// r.Err with its class, but, where ModelText hides its message, the text
// the model read instead.
func (r Result) PublicErr() error {
	if r.Err == nil || ModelText(r.Err) == r.Err.Error() {
		return r.Err
	}
	return errdefs.Newf(errdefs.ClassOf(r.Err), "%s", r.Content)
}
