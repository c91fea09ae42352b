package mcpserver

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

	"agentd/internal/model"
	"agentd/internal/runtime"
)

// args are a call's arguments (inputSchema).
type args struct {
	Message   string
	Data      json.RawMessage
	ContextID string
	RunID     string
}

// argError is a call's arguments not matching the input schema: the
// result is a tool error naming the argument, and nothing runs.
type argError struct{ msg string }

func (e *argError) Error() string { return e.msg }

func argErrorf(format string, a ...any) error { return &argError{fmt.Sprintf(format, a...)} }

// parseArgs checks raw against inputSchema member by member, so that the
// error names the argument and what it should be.
func parseArgs(raw json.RawMessage) (args, error) {
	var members map[string]json.RawMessage
	if len(bytes.TrimSpace(raw)) == 0 || bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return args{}, argErrorf("arguments: required, an object with a \"message\" string")
	}
	if err := json.Unmarshal(raw, &members); err != nil {
		return args{}, argErrorf("arguments: must be an object with a \"message\" string, got %s", jsonKind(raw))
	}
	var a args
	names := make([]string, 0, len(members))
	for k := range members {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		v := members[k]
		var err error
		switch k {
		case "message":
			err = stringArg(k, v, &a.Message)
		case "context_id":
			err = stringArg(k, v, &a.ContextID)
		case "run_id":
			err = stringArg(k, v, &a.RunID)
		case "data":
			if jsonKind(v) != "object" {
				err = argErrorf("arguments.data: must be an object, got %s", jsonKind(v))
			}
			a.Data = v
		default:
			err = argErrorf("arguments.%s: unknown argument (known: message, data, context_id, run_id)", k)
		}
		if err != nil {
			return args{}, err
		}
	}
	if _, ok := members["message"]; !ok {
		return args{}, argErrorf("arguments.message: required, a string")
	}
	return a, nil
}

func stringArg(name string, v json.RawMessage, dst *string) error {
	if err := json.Unmarshal(v, dst); err != nil || jsonKind(v) != "string" {
		return argErrorf("arguments.%s: must be a string, got %s", name, jsonKind(v))
	}
	return nil
}

// jsonKind names the JSON type of v as JSON Schema does.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// message is the user message a call sends: the text, and the data as a
// data part. The runtime's own check says what is wrong with either.
func (a args) message() (model.Message, error) {
	var msg model.Message
	if a.Message != "" {
		msg = model.NewText(model.RoleUser, a.Message)
	} else if len(a.Data) == 0 {
		return msg, argErrorf("arguments.message: must not be empty")
	}
	msg.Role = model.RoleUser
	if len(a.Data) > 0 {
		msg.Parts = append(msg.Parts, model.Part{Type: model.PartData, Data: a.Data})
	}
	if field, err := runtime.CheckUserMessage(msg); err != nil {
		arg := "message"
		if strings.HasPrefix(field, fmt.Sprintf("message.parts[%d]", len(msg.Parts)-1)) && len(a.Data) > 0 {
			arg = "data"
		}
		return msg, argErrorf("arguments.%s: %v", arg, err)
	}
	return msg, nil
}
