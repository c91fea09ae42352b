package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
)

// CalculatorName is the name the calculator registers under.
const CalculatorName = "calculator"

const calculatorSchema = `{
  "type": "object",
  "properties": {
    "expression": {
      "type": "string",
      "description": "Arithmetic expression, e.g. \"(2 + 3) * 4 ^ 2 / sqrt(16)\". Operators: + - * / % ^ and parentheses. Functions: sqrt, abs, round, floor, ceil, min, max, pow, log (base 10, or log(x, base)), ln, sin, cos, tan (radians). Constants: pi, e.",
      "minLength": 1,
      "maxLength": 1000
    }
  },
  "required": ["expression"],
  "additionalProperties": false
}`

// resultDigits is the number of significant digits results are rounded to:
// enough for any everyday answer, few enough to hide binary float noise
// (0.1 + 0.2 is 0.3, not 0.30000000000000004).
const resultDigits = 14

// Calculator returns the calculator tool: it evaluates an arithmetic
// expression with a hand-written parser (no code execution, no variables)
// and answers with the number, formatted without float noise.
func Calculator() Tool {
	spec := Spec{
		Name:        CalculatorName,
		Description: "Evaluate an arithmetic expression and return the number. Use it for any calculation instead of computing in your head.",
		Parameters:  json.RawMessage(calculatorSchema),
		Flags:       Flags{ParallelSafe: true, Idempotent: true},
	}
	type args struct {
		Expression string `json:"expression"`
	}
	return Typed(spec, func(_ context.Context, a args) (Result, error) {
		v, err := evaluate(a.Expression)
		if err != nil {
			return Result{}, err
		}
		text := formatNumber(v)
		data, err := json.Marshal(struct {
			Expression string  `json:"expression"`
			Result     float64 `json:"result"`
		}{a.Expression, v})
		if err != nil {
			return Result{}, fmt.Errorf("encode result: %w", err)
		}
		return Result{Content: text, Data: data}, nil
	})
}

// formatNumber prints integers exactly and everything else rounded to
// resultDigits significant digits, in plain notation unless the magnitude
// makes an exponent easier to read.
func formatNumber(v float64) string {
	if v == 0 {
		return "0" // also for -0
	}
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(v, 'g', resultDigits, 64), 64)
	if err != nil {
		return strconv.FormatFloat(v, 'g', -1, 64)
	}
	if exp := math.Floor(math.Log10(math.Abs(r))); exp >= -6 && exp < 15 {
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	return strconv.FormatFloat(r, 'g', -1, 64)
}

// applyFunction computes a named function; its errors name the function and
// the parser adds the position.
func applyFunction(name string, args []float64) (float64, error) {
	need := func(lo, hi int) error {
		if len(args) >= lo && len(args) <= hi {
			return nil
		}
		switch {
		case lo == hi && lo == 1:
			return fmt.Errorf("%s takes 1 argument, got %d", name, len(args))
		case lo == hi:
			return fmt.Errorf("%s takes %d arguments, got %d", name, lo, len(args))
		case hi == math.MaxInt:
			return fmt.Errorf("%s takes at least %d argument, got %d", name, lo, len(args))
		}
		return fmt.Errorf("%s takes %d or %d arguments, got %d", name, lo, hi, len(args))
	}
	switch name {
	case "sqrt", "abs", "floor", "ceil", "ln", "sin", "cos", "tan":
		if err := need(1, 1); err != nil {
			return 0, err
		}
		return applyUnary(name, args[0])
	case "round":
		if err := need(1, 2); err != nil {
			return 0, err
		}
		return round(args)
	case "min", "max":
		if err := need(1, math.MaxInt); err != nil {
			return 0, err
		}
		pick := math.Min
		if name == "max" {
			pick = math.Max
		}
		v := args[0]
		for _, a := range args[1:] {
			v = pick(v, a)
		}
		return v, nil
	case "pow":
		if err := need(2, 2); err != nil {
			return 0, err
		}
		v := math.Pow(args[0], args[1])
		if math.IsNaN(v) {
			return 0, fmt.Errorf("pow(%s, %s) is not a real number", formatNumber(args[0]), formatNumber(args[1]))
		}
		return v, nil
	case "log":
		if err := need(1, 2); err != nil {
			return 0, err
		}
		return logarithm(args)
	}
	return 0, fmt.Errorf("unknown function %q (functions: %s)", name, calcFunctions)
}

func applyUnary(name string, x float64) (float64, error) {
	switch name {
	case "sqrt":
		if x < 0 {
			return 0, fmt.Errorf("sqrt of a negative number (%s)", formatNumber(x))
		}
		return math.Sqrt(x), nil
	case "abs":
		return math.Abs(x), nil
	case "floor":
		return math.Floor(x), nil
	case "ceil":
		return math.Ceil(x), nil
	case "ln":
		if x <= 0 {
			return 0, fmt.Errorf("ln of a non-positive number (%s)", formatNumber(x))
		}
		return math.Log(x), nil
	case "sin":
		return math.Sin(x), nil
	case "cos":
		return math.Cos(x), nil
	default: // tan
		return math.Tan(x), nil
	}
}

// round rounds half away from zero, optionally to a number of decimal
// places (negative places round to tens, hundreds, …).
func round(args []float64) (float64, error) {
	if len(args) == 1 {
		return math.Round(args[0]), nil
	}
	places := args[1]
	if places != math.Trunc(places) || math.Abs(places) > 15 {
		return 0, fmt.Errorf("round: decimal places must be a whole number from -15 to 15, got %s", formatNumber(places))
	}
	scale := math.Pow(10, places)
	scaled := args[0] * scale
	if math.IsInf(scaled, 0) {
		return args[0], nil // too large to have those decimals anyway
	}
	return math.Round(scaled) / scale, nil
}

// logarithm is log10(x), or log(x, base).
func logarithm(args []float64) (float64, error) {
	x := args[0]
	if x <= 0 {
		return 0, fmt.Errorf("log of a non-positive number (%s)", formatNumber(x))
	}
	if len(args) == 1 {
		return math.Log10(x), nil
	}
	base := args[1]
	if base <= 0 || base == 1 {
		return 0, fmt.Errorf("log base must be positive and not 1, got %s", formatNumber(base))
	}
	return math.Log(x) / math.Log(base), nil
}
