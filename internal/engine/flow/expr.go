package flow

import (
	"fmt"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// condCostLimit bounds the work of one condition: transitions decide a
// route, they do not compute.
const condCostLimit = 10_000

// condition is a compiled transition condition. The expression is parsed,
// not type-checked: a flow's context is open (values arrive from answers,
// tools and the first message), so identifiers resolve when it runs, and
// one that names nothing is an evaluation error naming it.
type condition struct {
	src  string
	prog cel.Program
}

// newCELEnv is the environment conditions are parsed in. Numbers compare
// across int and double, since context values cross JSON.
func newCELEnv() (*cel.Env, error) {
	return cel.NewEnv(cel.CrossTypeNumericComparisons(true))
}

// compileCondition parses src and plans its program.
func compileCondition(env *cel.Env, src string) (*condition, error) {
	ast, iss := env.Parse(src)
	if iss.Err() != nil {
		return nil, fmt.Errorf("%q is not a valid CEL expression: %v", src, iss.Err())
	}
	prog, err := env.Program(ast, cel.CostLimit(condCostLimit))
	if err != nil {
		return nil, fmt.Errorf("%q: %v", src, err)
	}
	return &condition{src: src, prog: prog}, nil
}

// eval reports whether the condition holds over vars. A result that is
// not a bool is an error, as is a reference to nothing.
func (c *condition) eval(vars map[string]any) (bool, error) {
	out, _, err := c.prog.Eval(vars)
	if err != nil {
		return false, fmt.Errorf("condition %q: %v", c.src, err)
	}
	b, ok := out.(types.Bool)
	if !ok {
		return false, fmt.Errorf("condition %q: evaluates to %s, not a bool", c.src, out.Type().TypeName())
	}
	return bool(b), nil
}
