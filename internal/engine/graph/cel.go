package graph

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"
)

// celEnv declares the variables every workflow expression may read (spec
// §5, §6): steps.<id>.content|status|result, iteration, item, index, and
// the single-step loop's content, result and status.
var celEnv = sync.OnceValues(func() (*cel.Env, error) {
	return cel.NewEnv(
		cel.Variable("steps", cel.MapType(cel.StringType, cel.DynType)),
		cel.Variable("iteration", cel.IntType),
		cel.Variable("item", cel.DynType),
		cel.Variable("index", cel.IntType),
		cel.Variable("content", cel.StringType),
		cel.Variable("result", cel.DynType),
		cel.Variable("status", cel.StringType),
	)
})

// expr is a compiled workflow expression. The zero value is no expression.
type expr struct {
	src  string
	prog cel.Program
}

// want is the result type an expression must produce.
type want int

const (
	wantBool want = iota
	wantList
)

// compileExpr compiles src once, at load. Step ids with hyphens are read
// as step ids, not subtractions: `steps.run-tests.status` is compiled as
// `steps["run-tests"].status` when run-tests is a step of ids (and also
// when it is no known step, which is then reported at evaluation). The
// error names the position in src.
func compileExpr(src string, ids []string, w want) (expr, error) {
	env, err := celEnv()
	if err != nil {
		return expr{}, err
	}
	rewritten, shifts := rewriteStepRefs(src, ids)
	ast, iss := env.Compile(rewritten)
	if iss != nil && iss.Err() != nil {
		e := iss.Errors()[0]
		col := e.Location.Column()
		for _, s := range shifts {
			if col > s.at {
				col -= s.by
			}
		}
		return expr{}, fmt.Errorf("CEL: %s (line %d, column %d)", e.Message, e.Location.Line(), col+1)
	}
	out := ast.OutputType()
	switch {
	case out == cel.DynType:
	case w == wantBool && out != cel.BoolType:
		return expr{}, fmt.Errorf("CEL: expression returns %s, want bool", out)
	case w == wantList && out.Kind() != types.ListKind:
		return expr{}, fmt.Errorf("CEL: expression returns %s, want a list", out)
	}
	prog, err := env.Program(ast, cel.CostLimit(celCostLimit))
	if err != nil {
		return expr{}, fmt.Errorf("CEL: %v", err)
	}
	return expr{src: src, prog: prog}, nil
}

// shift records that rewriting added by characters after offset at.
type shift struct{ at, by int }

// rewriteStepRefs rewrites `steps.<id>` with a hyphenated id into
// `steps["<id>"]`, outside string literals. The id taken is the longest
// of ids that fits; with none, the whole run of id characters.
func rewriteStepRefs(src string, ids []string) (string, []shift) {
	var b strings.Builder
	var shifts []shift
	for i := 0; i < len(src); {
		c := src[i]
		if c == '"' || c == '\'' {
			j := skipString(src, i)
			b.WriteString(src[i:j])
			i = j
			continue
		}
		if strings.HasPrefix(src[i:], "steps.") && (i == 0 || !identByte(src[i-1])) {
			start := i + len("steps.")
			end := start
			for end < len(src) && (identByte(src[end]) || src[end] == '-') {
				end++
			}
			id := longestID(src[start:end], ids)
			if strings.Contains(id, "-") {
				repl := "steps[" + strconv.Quote(id) + "]"
				shifts = append(shifts, shift{at: b.Len(), by: len(repl) - len("steps.") - len(id)})
				b.WriteString(repl)
				i = start + len(id)
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String(), shifts
}

func longestID(run string, ids []string) string {
	best := ""
	for _, id := range ids {
		// The id fits when the run is the id, or goes on with a hyphen
		// that is then a subtraction.
		if len(id) > len(best) && strings.HasPrefix(run, id) && (len(run) == len(id) || run[len(id)] == '-') {
			best = id
		}
	}
	if best == "" {
		return strings.TrimRight(run, "-")
	}
	return best
}

func identByte(c byte) bool {
	return c == '_' || c < unicode.MaxASCII && (unicode.IsLetter(rune(c)) || unicode.IsDigit(rune(c)))
}

// skipString returns the index just past the string literal at src[i].
func skipString(src string, i int) int {
	q := src[i]
	triple := strings.HasPrefix(src[i:], strings.Repeat(string(q), 3))
	if triple {
		if end := strings.Index(src[i+3:], strings.Repeat(string(q), 3)); end >= 0 {
			return i + 3 + end + 3
		}
		return len(src)
	}
	for j := i + 1; j < len(src); j++ {
		switch src[j] {
		case '\\':
			j++
		case q:
			return j + 1
		}
	}
	return len(src)
}

// celVars is what an expression sees when it is evaluated.
type celVars struct {
	Steps     map[string]stepView
	Iteration int
	Item      any
	Index     int
	Content   string
	Result    map[string]any
	Status    string
}

// stepView is steps.<id> in an expression.
type stepView struct {
	Content string
	Status  string
	Result  map[string]any
}

func (s celVars) activation() map[string]any {
	steps := make(map[string]any, len(s.Steps))
	for id, v := range s.Steps {
		steps[id] = map[string]any{"content": v.Content, "status": v.Status, "result": orEmpty(v.Result)}
	}
	return map[string]any{
		"steps": steps, "iteration": s.Iteration, "item": s.Item, "index": s.Index,
		"content": s.Content, "result": orEmpty(s.Result), "status": s.Status,
	}
}

func orEmpty(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// evalBool evaluates a condition or until expression.
func (e expr) evalBool(s celVars) (bool, error) {
	out, _, err := e.prog.Eval(s.activation())
	if err != nil {
		return false, fmt.Errorf("CEL %q: %v", e.src, err)
	}
	b, ok := out.Value().(bool)
	if !ok {
		return false, fmt.Errorf("CEL %q: result is %s, want bool", e.src, out.Type())
	}
	return b, nil
}

// evalList evaluates a forEach expression into plain Go values.
func (e expr) evalList(s celVars) ([]any, error) {
	out, _, err := e.prog.Eval(s.activation())
	if err != nil {
		return nil, fmt.Errorf("CEL %q: %v", e.src, err)
	}
	v, err := out.ConvertToNative(reflect.TypeFor[[]any]())
	if err != nil {
		return nil, fmt.Errorf("CEL %q: result is %s, want a list", e.src, out.Type())
	}
	list := v.([]any)
	for i, item := range list {
		list[i] = plain(item)
	}
	return list, nil
}

// plain turns CEL values left inside converted lists into Go values.
func plain(v any) any {
	if rv, ok := v.(interface{ Value() any }); ok {
		v = rv.Value()
	}
	switch t := v.(type) {
	case []any:
		for i := range t {
			t[i] = plain(t[i])
		}
	case map[string]any:
		for k := range t {
			t[k] = plain(t[k])
		}
	}
	return v
}
