package otlptest

import (
	"strconv"
	"strings"

	common "go.opentelemetry.io/proto/otlp/common/v1"
)

// valueString renders an attribute value as text: strings as they are,
// numbers and booleans as Go prints them, arrays joined by commas.
func valueString(v *common.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *common.AnyValue_StringValue:
		return x.StringValue
	case *common.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *common.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	case *common.AnyValue_DoubleValue:
		return strconv.FormatFloat(x.DoubleValue, 'g', -1, 64)
	case *common.AnyValue_ArrayValue:
		parts := make([]string, 0, len(x.ArrayValue.GetValues()))
		for _, e := range x.ArrayValue.GetValues() {
			parts = append(parts, valueString(e))
		}
		return strings.Join(parts, ",")
	}
	return ""
}
