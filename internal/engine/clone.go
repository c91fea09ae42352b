package engine

import (
	"encoding/json"
	"maps"
	"reflect"
	"slices"
	"time"

	"agentd/internal/model"
)

// Cloneable is implemented by board values that know how to deep-copy
// themselves, typically because they hold unexported reference fields that
// the structural copy cannot reach. Clone must return an independent value
// of the same dynamic type.
type Cloneable interface {
	Clone() any
}

// DeepCopy returns an independent copy of v as Board.Snapshot stores it:
// Cloneable values through Clone; JSON-shaped values (maps, slices,
// scalars, json.RawMessage, model messages) through a fast path; anything
// else structurally by reflection, following pointers, maps, slices, arrays,
// interfaces and exported struct fields, preserving pointer sharing and
// cycles. Unexported struct fields, channels and funcs are shared, not
// copied: a type that needs more implements Cloneable.
func DeepCopy(v any) any {
	if out, ok := copyFast(v); ok {
		return out
	}
	c := copier{}
	rv := reflect.ValueOf(v)
	return c.copy(rv).Interface()
}

// copyFast handles the shapes boards actually hold (decoded JSON and
// model types) without reflection.
func copyFast(v any) (any, bool) {
	switch t := v.(type) {
	case nil, string, bool, int, int8, int16, int32, int64, uint, uint8, uint16,
		uint32, uint64, float32, float64, json.Number, time.Time, time.Duration:
		return v, true
	case Cloneable:
		return t.Clone(), true
	case map[string]any:
		if t == nil {
			return t, true
		}
		out := make(map[string]any, len(t))
		for k, e := range t {
			out[k] = DeepCopy(e)
		}
		return out, true
	case []any:
		if t == nil {
			return t, true
		}
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = DeepCopy(e)
		}
		return out, true
	case []string:
		return slices.Clone(t), true
	case map[string]string:
		return maps.Clone(t), true
	case json.RawMessage:
		return slices.Clone(t), true
	case []byte:
		return slices.Clone(t), true
	case model.Message:
		return t.Clone(), true
	case []model.Message:
		if t == nil {
			return t, true
		}
		out := make([]model.Message, len(t))
		for i, m := range t {
			out[i] = m.Clone()
		}
		return out, true
	case model.Part:
		return t.Clone(), true
	}
	return nil, false
}

// cloneableType is reflect's view of Cloneable, for values found inside
// structs and containers.
var cloneableType = reflect.TypeFor[Cloneable]()

// copier deep-copies by reflection. seen maps an original pointer to its
// copy so shared pointers stay shared and cycles terminate.
type copier struct {
	seen map[uintptr]reflect.Value
}

func (c *copier) copy(v reflect.Value) reflect.Value {
	if !v.IsValid() {
		return v
	}
	if v.Type().Implements(cloneableType) && v.CanInterface() && !isNilRef(v) {
		if out := reflect.ValueOf(v.Interface().(Cloneable).Clone()); out.IsValid() && out.Type().AssignableTo(v.Type()) {
			return out
		}
	}
	switch v.Kind() {
	case reflect.Pointer:
		return c.copyPointer(v)
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		out := reflect.New(v.Type()).Elem()
		out.Set(c.copy(v.Elem()))
		return out
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeMapWithSize(v.Type(), v.Len())
		for it := v.MapRange(); it.Next(); {
			out.SetMapIndex(c.copy(it.Key()), c.copy(it.Value()))
		}
		return out
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		out := reflect.MakeSlice(v.Type(), v.Len(), v.Len())
		for i := range v.Len() {
			out.Index(i).Set(c.copy(v.Index(i)))
		}
		return out
	case reflect.Array:
		out := reflect.New(v.Type()).Elem()
		for i := range v.Len() {
			out.Index(i).Set(c.copy(v.Index(i)))
		}
		return out
	case reflect.Struct:
		out := reflect.New(v.Type()).Elem()
		out.Set(v) // unexported fields stay shared; exported ones are replaced below
		for i := range v.NumField() {
			if out.Field(i).CanSet() {
				out.Field(i).Set(c.copy(v.Field(i)))
			}
		}
		return out
	default:
		return v
	}
}

func (c *copier) copyPointer(v reflect.Value) reflect.Value {
	if v.IsNil() {
		return v
	}
	if dup, ok := c.seen[v.Pointer()]; ok {
		return dup
	}
	if c.seen == nil {
		c.seen = make(map[uintptr]reflect.Value)
	}
	out := reflect.New(v.Type().Elem())
	c.seen[v.Pointer()] = out
	out.Elem().Set(c.copy(v.Elem()))
	return out
}

func isNilRef(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer, reflect.Interface, reflect.Map, reflect.Slice, reflect.Func, reflect.Chan:
		return v.IsNil()
	}
	return false
}
