package flow

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// schemaTypes are the scalar types context_schema knows; a list of one of
// them ([string]) is a list type.
var schemaTypes = []string{"string", "int", "float", "bool"}

// valueType is one context_schema entry: a scalar type, or a list of one.
type valueType struct {
	scalar string
	list   bool
}

func (t valueType) String() string {
	if t.list {
		return "[" + t.scalar + "]"
	}
	return t.scalar
}

// parseValueType reads "string", "int", … or a one-element list of one.
func parseValueType(v any) (valueType, error) {
	switch s := v.(type) {
	case string:
		if slices.Contains(schemaTypes, s) {
			return valueType{scalar: s}, nil
		}
		if inner, ok := strings.CutPrefix(s, "["); ok {
			if inner, ok = strings.CutSuffix(inner, "]"); ok && slices.Contains(schemaTypes, inner) {
				return valueType{scalar: inner, list: true}, nil
			}
		}
	case []any:
		if len(s) == 1 {
			if e, ok := s[0].(string); ok && slices.Contains(schemaTypes, e) {
				return valueType{scalar: e, list: true}, nil
			}
		}
	}
	return valueType{}, fmt.Errorf("unknown type %v (want %s, or a list such as [string])", v, strings.Join(schemaTypes, ", "))
}

// check reports whether v has type t. Numbers arrive as int64 or float64
// (JSON decoding); an int is a number without a fraction.
func (t valueType) check(v any) bool {
	if !t.list {
		return scalarIs(t.scalar, v)
	}
	l, ok := v.([]any)
	if !ok {
		return false
	}
	for _, e := range l {
		if !scalarIs(t.scalar, e) {
			return false
		}
	}
	return true
}

func scalarIs(typ string, v any) bool {
	switch typ {
	case "string":
		_, ok := v.(string)
		return ok
	case "bool":
		_, ok := v.(bool)
		return ok
	case "int":
		switch n := v.(type) {
		case int, int64:
			return true
		case float64:
			return n == math.Trunc(n) && !math.IsInf(n, 0)
		}
	case "float":
		switch v.(type) {
		case int, int64, float64:
			return true
		}
	}
	return false
}

// typeName describes v for a mismatch error.
func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "string"
	case bool:
		return "bool"
	case int, int64:
		return "int"
	case float64:
		return "float"
	case []any:
		return "list"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}
