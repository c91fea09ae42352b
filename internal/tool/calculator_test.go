package tool_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

func calc(t testing.TB, reg *tool.Registry, expr string) tool.Result {
	t.Helper()
	args, err := json.Marshal(map[string]string{"expression": expr})
	if err != nil {
		t.Fatal(err)
	}
	return reg.Execute(context.Background(), tool.Call{ID: "c1", Name: tool.CalculatorName, Arguments: args})
}

func builtins(t testing.TB) *tool.Registry {
	t.Helper()
	var reg tool.Registry
	if err := tool.RegisterBuiltins(&reg, tool.BuiltinOptions{}); err != nil {
		t.Fatal(err)
	}
	return &reg
}

func TestCalculator(t *testing.T) {
	tests := []struct {
		expr string
		want string
	}{
		{"1 + 2", "3"},
		{"2 + 3 * 4", "14"},
		{"(2 + 3) * 4", "20"},
		{"10 - 4 - 3", "3"},
		{"100 / 10 / 5", "2"},
		{"7 % 3", "1"},
		{"-7 % 3", "-1"},
		{"5.5 % 2", "1.5"},
		{"2 ^ 10", "1024"},
		{"2 ** 10", "1024"},
		{"2 ^ 3 ^ 2", "512"},
		{"(2 ^ 3) ^ 2", "64"},
		{"-2 ^ 2", "-4"},
		{"(-2) ^ 2", "4"},
		{"2 ^ -1", "0.5"},
		{"--3", "3"},
		{"-+-3", "3"},
		{"2 * -3", "-6"},
		{"1 - -1", "2"},
		{"0.1 + 0.2", "0.3"},
		{"1.1 * 1.1", "1.21"},
		{"1 / 3", "0.33333333333333"},
		{"2 / 3", "0.66666666666667"},
		{".5 + 1.", "1.5"},
		{"1e3", "1000"},
		{"1.5E-3 * 2", "0.003"},
		{"2.5e+2", "250"},
		{"1e20", "1e+20"},
		{"1e-9", "1e-09"},
		{"123456789012345", "123456789012345"},
		{"1234567.5", "1234567.5"},
		{"-0", "0"},
		{"0 * -1", "0"},
		{"1e-400", "0"},
		{"sqrt(16)", "4"},
		{"sqrt(2)", "1.4142135623731"},
		{"abs(-3.5)", "3.5"},
		{"round(2.5)", "3"},
		{"round(-2.5)", "-3"},
		{"round(3.14159, 2)", "3.14"},
		{"round(1234, -2)", "1200"},
		{"round(1e300, 2)", "1e+300"},
		{"floor(-1.5)", "-2"},
		{"ceil(1.2)", "2"},
		{"min(3, 1, 2)", "1"},
		{"max(3, 1, 2)", "3"},
		{"max(4)", "4"},
		{"pow(2, 8)", "256"},
		{"log(1000)", "3"},
		{"log(8, 2)", "3"},
		{"ln(e)", "1"},
		{"sin(0)", "0"},
		{"cos(0)", "1"},
		{"tan(0)", "0"},
		{"sin(pi / 2)", "1"},
		{"cos(pi)", "-1"},
		{"pi", "3.1415926535898"},
		{"PI * 2", "6.2831853071796"},
		{"SQRT(9)", "3"},
		{"e", "2.718281828459"},
		{" \t( 1 +\n2 ) ", "3"},
		{"((((1))))", "1"},
		{"sqrt(16) + max(1, 2 * 3) ^ 2 / 4", "13"},
		{"2 * (3 + 4) % 5", "4"},
		{"min(1, -(2 + 3))", "-5"},
	}
	reg := builtins(t)
	for _, tt := range tests {
		t.Run(tt.expr, func(t *testing.T) {
			res := calc(t, reg, tt.expr)
			if res.IsError {
				t.Fatalf("calculator(%q): error %q", tt.expr, res.Content)
			}
			if res.Content != tt.want {
				t.Errorf("calculator(%q) = %q, want %q", tt.expr, res.Content, tt.want)
			}
		})
	}
}

func TestCalculatorErrors(t *testing.T) {
	tests := []struct {
		expr string
		want string // exact content
	}{
		{"1 / 0", "calculator: division by zero at position 3"},
		{"1 / (2 - 2)", "calculator: division by zero at position 3"},
		{"5 % 0", "calculator: modulo by zero at position 3"},
		{"1 +", "calculator: unexpected end of expression at position 4"},
		{"(1 + 2", "calculator: unclosed parenthesis at position 1"},
		{"max(1, 2", "calculator: unclosed parenthesis at position 4"},
		{"1 + 2)", "calculator: unexpected character ')' at position 6"},
		{"2 3", "calculator: unexpected character '3' at position 3"},
		{"1.2.3", "calculator: unexpected character '.' at position 4"},
		{"2pi", "calculator: unexpected character 'p' at position 2"},
		{"1 $ 2", "calculator: unexpected character '$' at position 3"},
		{"1 + é", "calculator: unexpected character 'é' at position 5"},
		{".", "calculator: malformed number at position 1"},
		{"1e", `calculator: malformed number "1e" (exponent needs digits) at position 1`},
		{"1e+", `calculator: malformed number "1e+" (exponent needs digits) at position 1`},
		{"x + 1", `calculator: unknown name "x" (constants: pi, e; functions: abs, ceil, cos, floor, ln, log, max, min, pow, round, sin, sqrt, tan) at position 1`},
		{"exec(1)", `calculator: unknown function "exec" (functions: abs, ceil, cos, floor, ln, log, max, min, pow, round, sin, sqrt, tan) at position 1`},
		{"sqrt(-4)", "calculator: sqrt of a negative number (-4) at position 1"},
		{"ln(0)", "calculator: ln of a non-positive number (0) at position 1"},
		{"log(-1)", "calculator: log of a non-positive number (-1) at position 1"},
		{"log(8, 1)", "calculator: log base must be positive and not 1, got 1 at position 1"},
		{"sqrt(1, 2)", "calculator: sqrt takes 1 argument, got 2 at position 1"},
		{"sqrt()", "calculator: sqrt takes 1 argument, got 0 at position 1"},
		{"pow(2)", "calculator: pow takes 2 arguments, got 1 at position 1"},
		{"round(1, 2, 3)", "calculator: round takes 1 or 2 arguments, got 3 at position 1"},
		{"round(1, 0.5)", "calculator: round: decimal places must be a whole number from -15 to 15, got 0.5 at position 1"},
		{"min()", "calculator: min takes at least 1 argument, got 0 at position 1"},
		{"(-8) ^ 0.5", "calculator: -8 to the power 0.5 is not a real number at position 6"},
		{"pow(-8, 0.5)", "calculator: pow(-8, 0.5) is not a real number at position 1"},
		{"10 ^ 400", "calculator: result out of range at position 4"},
		{"1e308 * 10", "calculator: result out of range at position 7"},
		{"1e400", "calculator: number 1e400 out of range at position 1"},
		{"()", "calculator: unexpected character ')' at position 2"},
		{"max(1,)", "calculator: unexpected character ')' at position 7"},
		{strings.Repeat("(", 101) + "1" + strings.Repeat(")", 101), "calculator: expression nested more than 100 levels deep at position 101"},
		{strings.Repeat("-", 200) + "1", "calculator: expression nested more than 100 levels deep at position 100"},
		{"", "calculator: argument /expression: minLength: got 0, want 1"},
		{strings.Repeat("1", 1001), "calculator: argument /expression: maxLength: got 1,001, want 1,000"},
	}
	reg := builtins(t)
	for _, tt := range tests {
		name := tt.expr
		if len(name) > 30 {
			name = name[:30]
		}
		t.Run(name, func(t *testing.T) {
			res := calc(t, reg, tt.expr)
			if !res.IsError {
				t.Fatalf("calculator(%q) = %q, want error %q", tt.expr, res.Content, tt.want)
			}
			if res.Content != tt.want {
				t.Errorf("calculator(%q) error\n got %q\nwant %q", tt.expr, res.Content, tt.want)
			}
			if !errdefs.IsValidation(res.Err) {
				t.Errorf("class of %v = %s, want validation", res.Err, errdefs.ClassOf(res.Err))
			}
		})
	}
}

// The calculator's own length limit holds even when it is run without the
// registry's schema check.
func TestCalculatorLengthLimitWithoutSchema(t *testing.T) {
	args, _ := json.Marshal(map[string]string{"expression": strings.Repeat("1+", 600) + "1"})
	_, err := tool.Calculator().Execute(context.Background(), args)
	if !errdefs.IsValidation(err) || !strings.Contains(err.Error(), "the limit is 1000") {
		t.Fatalf("err = %v, want a validation error about the length limit", err)
	}
}

func TestCalculatorData(t *testing.T) {
	res := calc(t, builtins(t), "6 * 7")
	var data struct {
		Expression string  `json:"expression"`
		Result     float64 `json:"result"`
	}
	if err := json.Unmarshal(res.Data, &data); err != nil {
		t.Fatalf("data %s: %v", res.Data, err)
	}
	if data.Expression != "6 * 7" || data.Result != 42 {
		t.Errorf("data = %+v, want 6 * 7 = 42", data)
	}
}
