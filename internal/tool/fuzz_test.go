package tool_test

import (
	"context"
	"encoding/json"
	"math"
	"strconv"
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// FuzzCalculator feeds arbitrary text to the calculator. Without -fuzz it
// runs the seed corpus as an ordinary test. Whatever the input, the tool
// must not panic, and must answer with either a number or a classified
// validation error that says where the problem is.
func FuzzCalculator(f *testing.F) {
	for _, seed := range []string{
		"1 + 2 * 3", "-2^2", "2 ** 3 ** 2", "sqrt(16) + max(1, 2, 3)", "round(3.14159, 2)",
		"log(8, 2)", "1 / 0", "5 % 0", "((1)", "1e", "1e+", ".", "1.2.3", "pi * e", "x",
		"min(", "max(,)", "--+-1", "10 ^ 400", "1e308 * 10", "sqrt(-1)", "é", "\x00", "",
		strings.Repeat("(", 150), strings.Repeat("-", 150) + "1", "2 ^ -1074", "tan(pi/2)",
	} {
		f.Add(seed)
	}
	calc := tool.Calculator()
	f.Fuzz(func(t *testing.T, expr string) {
		args, err := json.Marshal(map[string]string{"expression": expr})
		if err != nil {
			t.Skip()
		}
		res, err := calc.Execute(context.Background(), args)
		if err != nil {
			if !errdefs.IsValidation(err) {
				t.Fatalf("calculator(%q): unclassified error %v", expr, err)
			}
			if msg := err.Error(); !strings.Contains(msg, " at position ") && !strings.Contains(msg, "the limit is") {
				t.Fatalf("calculator(%q): error without a position: %v", expr, msg)
			}
			return
		}
		v, err := strconv.ParseFloat(res.Content, 64)
		if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
			t.Fatalf("calculator(%q) = %q, want a finite number", expr, res.Content)
		}
	})
}
