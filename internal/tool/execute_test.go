package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/tool"
)

const personSchema = `{
  "type": "object",
  "properties": {
    "name": {"type": "string"},
    "age": {"type": "integer", "minimum": 0},
    "tags": {"type": "array", "items": {"type": "string"}}
  },
  "required": ["name"],
  "additionalProperties": false
}`

func TestExecuteValidatesArguments(t *testing.T) {
	var reg tool.Registry
	if err := reg.Register(echo("person", personSchema, tool.Flags{})); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		label string
		args  string
		want  string // content; an error unless it equals the arguments
		class errdefs.Class
	}{
		{"valid", `{"name":"Ada","age":36}`, `{"name":"Ada","age":36}`, ""},
		{"missing field", `{"age":3}`, "person: argument /name: missing property", errdefs.ClassValidation},
		{"empty arguments", ``, "person: argument /name: missing property", errdefs.ClassValidation},
		{"wrong type", `{"name":42}`, "person: argument /name: got number, want string", errdefs.ClassValidation},
		{"nested wrong type", `{"name":"a","tags":["x",7]}`, "person: argument /tags/1: got number, want string", errdefs.ClassValidation},
		{"extra property", `{"name":"a","nick":"b"}`, "person: argument /nick: property not allowed", errdefs.ClassValidation},
		{"several problems", `{"age":-1,"x":1}`, "person: argument /age: minimum: got -1, want 0; argument /name: missing property; argument /x: property not allowed", errdefs.ClassValidation},
		{"not an object", `[1,2]`, "person: arguments: got array, want object", errdefs.ClassValidation},
		{"malformed JSON", `{"name":`, "person: arguments are not valid JSON: unexpected EOF", errdefs.ClassValidation},
		{"trailing garbage", `{"name":"a"} x`, "person: arguments are not valid JSON: invalid character after top-level value", errdefs.ClassValidation},
	}
	for _, tt := range tests {
		t.Run(tt.label, func(t *testing.T) {
			res := reg.Execute(context.Background(), tool.Call{ID: "1", Name: "person", Arguments: json.RawMessage(tt.args)})
			if res.Content != tt.want {
				t.Errorf("content\n got %q\nwant %q", res.Content, tt.want)
			}
			if res.IsError != (tt.class != "") || errdefs.ClassOf(res.Err) != tt.class {
				t.Errorf("IsError=%v class=%q, want class %q", res.IsError, errdefs.ClassOf(res.Err), tt.class)
			}
		})
	}
}

func TestExecuteEmptyArgumentsForParameterlessTool(t *testing.T) {
	var reg tool.Registry
	if err := reg.Register(echo("ping", "", tool.Flags{})); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "ping"})
	if res.IsError || res.Content != "{}" {
		t.Fatalf("result = %+v, want the tool to see {}", res)
	}
}

func TestExecuteUnknownTool(t *testing.T) {
	reg := builtins(t)
	res := reg.Execute(context.Background(), tool.Call{ID: "1", Name: "clok"})
	want := `clok: unknown tool "clok" (available: calculator, clock)`
	if !res.IsError || res.Content != want || !errdefs.IsNotFound(res.Err) {
		t.Fatalf("result = %+v, want %q (not found)", res, want)
	}
	var empty tool.Registry
	if res := empty.Execute(context.Background(), tool.Call{Name: "x"}); !strings.Contains(res.Content, "available: none") {
		t.Errorf("empty registry: %q", res.Content)
	}
}

func TestExecuteRecoversPanics(t *testing.T) {
	var reg tool.Registry
	boom := tool.New(tool.Spec{Name: "boom"}, func(_ context.Context, args json.RawMessage) (tool.Result, error) {
		var none []int
		return tool.Text(fmt.Sprint(none[len(args)])), nil // a runtime panic, not a friendly one
	})
	if err := reg.Register(boom); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "boom"})
	if !res.IsError || !strings.HasPrefix(res.Content, "boom: tool failed unexpectedly: runtime error: index out of range [2] with length 0") {
		t.Fatalf("content = %q", res.Content)
	}
	if !errdefs.IsInternal(res.Err) || !strings.Contains(res.Err.Error(), "goroutine") {
		t.Errorf("Err = %v, want an internal error carrying the stack", res.Err)
	}
}

func TestExecuteToolErrors(t *testing.T) {
	var reg tool.Registry
	sentinel := errdefs.Forbiddenf("host %q is not allowed", "example.com")
	fails := tool.New(tool.Spec{Name: "fails"}, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{}, fmt.Errorf("fetch: %w", sentinel)
	})
	own := tool.New(tool.Spec{Name: "own"}, func(context.Context, json.RawMessage) (tool.Result, error) {
		return tool.Result{Content: "nothing found", IsError: true}, nil
	})
	for _, tl := range []tool.Tool{fails, own} {
		if err := reg.Register(tl); err != nil {
			t.Fatal(err)
		}
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "fails"})
	if !res.IsError || res.Content != `fails: fetch: host "example.com" is not allowed` || !errors.Is(res.Err, sentinel) || !errdefs.IsForbidden(res.Err) {
		t.Errorf("returned error: %+v", res)
	}
	res = reg.Execute(context.Background(), tool.Call{Name: "own"})
	if !res.IsError || res.Content != "nothing found" || res.Err != nil {
		t.Errorf("tool's own error result: %+v", res)
	}
}

func TestExecutePassesCallInContext(t *testing.T) {
	var reg tool.Registry
	who := tool.New(tool.Spec{Name: "who"}, func(ctx context.Context, _ json.RawMessage) (tool.Result, error) {
		c, ok := tool.CallFromContext(ctx)
		if !ok {
			return tool.Result{}, errors.New("no call in context")
		}
		return tool.Text(c.ID + "/" + c.IdempotencyKey), nil
	})
	if err := reg.Register(who); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tool.Call{ID: "call_7", Name: "who", IdempotencyKey: "run1:step3"})
	if res.Content != "call_7/run1:step3" {
		t.Fatalf("content = %q", res.Content)
	}
}

func TestExecuteCancelledContext(t *testing.T) {
	reg := builtins(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	res := reg.Execute(ctx, tool.Call{Name: tool.ClockName})
	if !res.IsError || res.Content != "clock: not run: context canceled" || !errdefs.IsAborted(res.Err) {
		t.Fatalf("result = %+v", res)
	}
}

func TestResultAndCallConversions(t *testing.T) {
	tc := model.ToolCall{ID: "c1", Name: "calculator", Arguments: json.RawMessage(`{"expression":"1+1"}`)}
	call := tool.CallOf(tc)
	if call.ID != "c1" || call.Name != "calculator" || string(call.Arguments) != string(tc.Arguments) {
		t.Fatalf("CallOf = %+v", call)
	}
	if back := call.ToolCall(); back.ID != tc.ID || back.Name != tc.Name {
		t.Errorf("ToolCall() = %+v", back)
	}
	res := builtins(t).Execute(context.Background(), call)
	tr := res.ToolResult(call)
	if tr.ToolCallID != "c1" || tr.Name != "calculator" || tr.Content != "2" || tr.IsError {
		t.Errorf("ToolResult = %+v", tr)
	}
	if err := model.ToolResultPart(tr).Validate(); err != nil {
		t.Errorf("tool result part: %v", err)
	}
}

func TestTypedDecodeError(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	// The schema allows any n, the Go type does not: the decode error still
	// reaches the model as a result.
	tl := tool.Typed(tool.Spec{Name: "typed"}, func(_ context.Context, a args) (tool.Result, error) {
		return tool.Text(fmt.Sprint(a.N)), nil
	})
	var reg tool.Registry
	if err := reg.Register(tl); err != nil {
		t.Fatal(err)
	}
	res := reg.Execute(context.Background(), tool.Call{Name: "typed", Arguments: json.RawMessage(`{"n":"x"}`)})
	if !res.IsError || !strings.HasPrefix(res.Content, "typed: decode arguments: ") || !errdefs.IsValidation(res.Err) {
		t.Fatalf("result = %+v", res)
	}
	res = reg.Execute(context.Background(), tool.Call{Name: "typed", Arguments: json.RawMessage(`{"n":5}`)})
	if res.IsError || res.Content != "5" {
		t.Fatalf("result = %+v", res)
	}
}
