package tool

import (
	"slices"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"agentd/internal/errdefs"
)

// maxNameLen is the longest tool name model APIs accept.
const maxNameLen = 64

// DefaultMaxParallel bounds concurrent parallel-safe calls in ExecuteAll
// when Registry.MaxParallel is zero.
const DefaultMaxParallel = 8

// Registry holds the tools a server offers, validates call arguments against
// each tool's schema, and runs calls. The zero value is an empty registry
// ready to use; it is safe for concurrent use and must not be copied.
//
// A tool's name, description, schema and flags are read once, at Register;
// the registry serves that snapshot from then on.
type Registry struct {
	// MaxParallel bounds how many parallel-safe calls ExecuteAll runs at
	// once; zero means DefaultMaxParallel. Set it before first use.
	MaxParallel int
	// MaxResultBytes caps the text of every result (a marker at its end
	// says it was cut); zero means DefaultMaxResultBytes. Set it before
	// first use.
	MaxResultBytes int

	mu    sync.RWMutex
	tools map[string]*entry
}

// entry is a registered tool with its snapshot and compiled schema.
type entry struct {
	tool   Tool
	spec   Spec
	schema *jsonschema.Schema
}

// Register adds t. It fails with a Validation error naming the tool when the
// name does not match ^[a-zA-Z0-9_-]{1,64}$, the flags or the schema are
// invalid, or a tool of that name is already registered.
func (r *Registry) Register(t Tool) error {
	if t == nil {
		return errdefs.Validationf("register: nil tool")
	}
	name := t.Name()
	if err := checkName(name); err != nil {
		return err
	}
	flags := t.Flags()
	if err := flags.validate(); err != nil {
		return errdefs.Validationf("tool %q: %w", name, err)
	}
	sch, raw, err := compileSchema(name, t.Schema())
	if err != nil {
		return err
	}
	e := &entry{
		tool:   t,
		spec:   Spec{Name: name, Description: t.Description(), Parameters: slices.Clone(raw), Flags: flags},
		schema: sch,
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.tools[name]; dup {
		return errdefs.Validationf("tool %q: already registered", name)
	}
	if r.tools == nil {
		r.tools = make(map[string]*entry)
	}
	r.tools[name] = e
	return nil
}

// checkName applies the OpenAI function-name rule, which the other model
// APIs agentd talks to accept too.
func checkName(name string) error {
	if name == "" || len(name) > maxNameLen {
		return errdefs.Validationf("tool %q: name must be 1 to %d characters", name, maxNameLen)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		ok := c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-'
		if !ok {
			return errdefs.Validationf("tool %q: name may contain only letters, digits, '_' and '-'", name)
		}
	}
	return nil
}

// Get returns the tool registered under name.
func (r *Registry) Get(name string) (Tool, bool) {
	e, ok := r.lookup(name)
	if !ok {
		return nil, false
	}
	return e.tool, true
}

// Names returns the registered tool names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.tools))
	for name := range r.tools {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

// Specs returns the specs of the named tools in the order given, or of every
// tool sorted by name when no names are given: what a model request lists.
// An unknown name is a NotFound error naming it and the available tools; a
// name given twice is a Validation error.
func (r *Registry) Specs(names ...string) ([]Spec, error) {
	if len(names) == 0 {
		names = r.Names()
	}
	specs := make([]Spec, 0, len(names))
	for i, name := range names {
		if slices.Contains(names[:i], name) {
			return nil, errdefs.Validationf("tool %q listed twice", name)
		}
		e, ok := r.lookup(name)
		if !ok {
			return nil, errdefs.NotFoundf("unknown tool %q (available: %s)", name, r.available())
		}
		s := e.spec
		s.Parameters = slices.Clone(s.Parameters)
		specs = append(specs, s)
	}
	return specs, nil
}

func (r *Registry) lookup(name string) (*entry, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.tools[name]
	return e, ok
}

// available lists the registered names for "unknown tool" messages.
func (r *Registry) available() string {
	names := r.Names()
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, ", ")
}
