package memstore

import (
	"encoding/json"
	"maps"
	"math"
	"slices"
	"strconv"
	"time"
	"unicode/utf8"

	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/store"
)

// The functions "in*" validate and copy a value on its way into the store,
// normalising it as PostgreSQL would; "out*" copy a stored value on its way
// out. Stored values hold JSON-shaped maps only, so copyJSON is a complete
// deep copy of them.

// fieldName names the input a value came from, for error messages. It is
// a function so that the name is built only when an error needs it: built
// eagerly, names cost allocations on every write.
type fieldName func() string

// storedTime is t at microsecond precision in UTC; zero stays zero.
func storedTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	return t.UTC().Truncate(time.Microsecond)
}

// orNow returns t at stored precision, or now when t is zero.
func orNow(t, now time.Time) time.Time {
	if t.IsZero() {
		return now
	}
	return storedTime(t)
}

// inJSONMap round-trips m through encoding/json: the result is a fresh map
// of JSON values (numbers as float64), as a JSONB column returns it. A map
// of values the round trip would not change — strings of valid UTF-8,
// finite float64s, bools and nils — is copied directly: the common case
// (an empty board, flat metadata) then costs one allocation, not a decoder.
func inJSONMap(m map[string]any, field fieldName) (map[string]any, error) {
	if m == nil {
		return nil, nil
	}
	if canonicalJSON(m) {
		return maps.Clone(m), nil
	}
	b, err := json.Marshal(m)
	if err != nil {
		return nil, errdefs.Validationf("%s: not encodable as JSON: %w", field(), err)
	}
	var out map[string]any
	if err := json.Unmarshal(b, &out); err != nil {
		return nil, errdefs.Validationf("%s: not encodable as JSON: %w", field(), err)
	}
	return out, nil
}

// canonicalJSON reports whether m's keys and values come back unchanged
// from an encoding/json round trip, so that a shallow copy is a deep one.
func canonicalJSON(m map[string]any) bool {
	for k, v := range m {
		if !utf8.ValidString(k) {
			return false
		}
		switch v := v.(type) {
		case nil, bool:
		case string:
			if !utf8.ValidString(v) {
				return false
			}
		case float64:
			if math.IsNaN(v) || math.IsInf(v, 0) {
				return false
			}
		default:
			return false
		}
	}
	return true
}

// inRaw copies an optional raw JSON value, rejecting invalid JSON.
func inRaw(b json.RawMessage, field fieldName) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, nil
	}
	if !validJSON(b) {
		return nil, errdefs.Validationf("%s: invalid JSON", field())
	}
	return slices.Clone(b), nil
}

// inRequiredRaw is inRaw for a value that must be present.
func inRequiredRaw(b json.RawMessage, field fieldName) (json.RawMessage, error) {
	if len(b) == 0 {
		return nil, errdefs.Validationf("%s: required JSON value is missing", field())
	}
	return inRaw(b, field)
}

// inParts copies parts, each nested value once.
func inParts(parts []model.Part, field fieldName) ([]model.Part, error) {
	if parts == nil {
		return nil, nil
	}
	out := make([]model.Part, len(parts))
	for i, p := range parts {
		if p.Data == nil && p.File == nil && p.ToolCall == nil && p.ToolResult == nil && p.Metadata == nil {
			out[i] = p // a text part: nothing nested to copy
			continue
		}
		f := func() string { return field() + "[" + strconv.Itoa(i) + "]" }
		var err error
		if p.Data, err = inRaw(p.Data, func() string { return f() + ".data" }); err != nil {
			return nil, err
		}
		if p.File != nil {
			file := *p.File
			file.Bytes = slices.Clone(file.Bytes)
			p.File = &file
		}
		if p.ToolCall != nil {
			call := *p.ToolCall
			if call.Arguments, err = inRaw(call.Arguments, func() string { return f() + ".tool_call.arguments" }); err != nil {
				return nil, err
			}
			p.ToolCall = &call
		}
		if p.ToolResult != nil {
			res := *p.ToolResult
			p.ToolResult = &res
		}
		if p.Metadata, err = inJSONMap(p.Metadata, func() string { return f() + ".metadata" }); err != nil {
			return nil, err
		}
		out[i] = p
	}
	return out, nil
}

func inMessage(m model.Message, field fieldName) (model.Message, error) {
	var err error
	if m.Parts, err = inParts(m.Parts, func() string { return field() + ".parts" }); err != nil {
		return model.Message{}, err
	}
	if m.Metadata, err = inJSONMap(m.Metadata, func() string { return field() + ".metadata" }); err != nil {
		return model.Message{}, err
	}
	m.CreatedAt = storedTime(m.CreatedAt)
	return m, nil
}

func inArtifacts(arts []model.Artifact, field fieldName) ([]model.Artifact, error) {
	if arts == nil {
		return nil, nil
	}
	out := make([]model.Artifact, len(arts))
	for i, a := range arts {
		f := func() string { return field() + "[" + strconv.Itoa(i) + "]" }
		var err error
		if a.Parts, err = inParts(a.Parts, func() string { return f() + ".parts" }); err != nil {
			return nil, err
		}
		if a.Metadata, err = inJSONMap(a.Metadata, func() string { return f() + ".metadata" }); err != nil {
			return nil, err
		}
		out[i] = a
	}
	return out, nil
}

// inTask copies the caller's task fields; the caller sets the store-owned
// ones (Tenant, Version, times).
func inTask(t store.Task, field fieldName) (*store.Task, error) {
	out := t
	var err error
	if t.StatusMessage != nil {
		m, err := inMessage(*t.StatusMessage, func() string { return field() + ".status_message" })
		if err != nil {
			return nil, err
		}
		out.StatusMessage = &m
	}
	if t.Error != nil {
		e := *t.Error
		out.Error = &e
	}
	if out.Artifacts, err = inArtifacts(t.Artifacts, func() string { return field() + ".artifacts" }); err != nil {
		return nil, err
	}
	if out.Metadata, err = inJSONMap(t.Metadata, func() string { return field() + ".metadata" }); err != nil {
		return nil, err
	}
	return &out, nil
}

func outTask(t *store.Task) store.Task {
	out := *t
	if t.StatusMessage != nil {
		m := t.StatusMessage.Clone()
		out.StatusMessage = &m
	}
	if t.Error != nil {
		e := *t.Error
		out.Error = &e
	}
	if t.Artifacts != nil {
		out.Artifacts = make([]model.Artifact, len(t.Artifacts))
		for i, a := range t.Artifacts {
			out.Artifacts[i] = outArtifact(a)
		}
	}
	out.Metadata = copyJSONMap(t.Metadata)
	return out
}

func outArtifact(a model.Artifact) model.Artifact {
	if a.Parts != nil {
		parts := make([]model.Part, len(a.Parts))
		for i, p := range a.Parts {
			parts[i] = p.Clone()
		}
		a.Parts = parts
	}
	a.Metadata = copyJSONMap(a.Metadata)
	return a
}

func outMessage(m store.Message) store.Message {
	m.Message = m.Message.Clone()
	return m
}

// copyJSONMap deep-copies a map of decoded JSON values.
func copyJSONMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	out := maps.Clone(m)
	for k, v := range out {
		out[k] = copyJSON(v)
	}
	return out
}

func copyJSON(v any) any {
	switch v := v.(type) {
	case map[string]any:
		return copyJSONMap(v)
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			out[i] = copyJSON(e)
		}
		return out
	default:
		return v
	}
}
