package openai

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// The Chat Completions request, as sent.
type chatRequest struct {
	Model       string        `json:"model"`
	Messages    []wireMessage `json:"messages"`
	Tools       []wireTool    `json:"tools,omitempty"`
	Temperature *float64      `json:"temperature,omitempty"`
	MaxTokens   int           `json:"max_tokens,omitempty"`
	TopP        *float64      `json:"top_p,omitempty"`
	// ResponseFormat and ToolChoice: see format.go.
	ResponseFormat *wireResponseFormat `json:"response_format,omitempty"`
	ToolChoice     any                 `json:"tool_choice,omitempty"`
	Stream         bool                `json:"stream"`
	StreamOptions  *streamOptions      `json:"stream_options,omitempty"`
}

type streamOptions struct {
	IncludeUsage bool `json:"include_usage"`
}

type wireMessage struct {
	Role string `json:"role"`
	// Content is a string, a []contentPart (images), or nil for an
	// assistant turn that only calls tools.
	Content    any            `json:"content"`
	ToolCalls  []wireToolCall `json:"tool_calls,omitempty"`
	ToolCallID string         `json:"tool_call_id,omitempty"`
}

type contentPart struct {
	Type     string    `json:"type"`
	Text     string    `json:"text,omitempty"`
	ImageURL *imageURL `json:"image_url,omitempty"`
}

type imageURL struct {
	URL string `json:"url"`
}

type wireToolCall struct {
	ID       string       `json:"id"`
	Type     string       `json:"type"`
	Function wireFunction `json:"function"`
}

type wireFunction struct {
	Name      string `json:"name"`
	Arguments string `json:"arguments"`
}

type wireTool struct {
	Type     string       `json:"type"`
	Function wireToolSpec `json:"function"`
}

type wireToolSpec struct {
	Name        string          `json:"name"`
	Description string          `json:"description,omitempty"`
	Parameters  json.RawMessage `json:"parameters"`
}

// emptyObjectSchema stands in for a tool without parameters; several
// servers reject a function without a parameters schema.
const emptyObjectSchema = `{"type":"object","properties":{}}`

// encodeRequest builds the request body for req.
func encodeRequest(req llm.Request, defaultModel string) ([]byte, string, error) {
	m := req.Model
	if m == "" {
		m = defaultModel
	}
	if m == "" {
		return nil, "", errdefs.Validationf("openai: no model: set one on the request or in the provider configuration")
	}
	if len(req.Messages) == 0 {
		return nil, "", errdefs.Validationf("openai: request for model %q has no messages", m)
	}
	body := chatRequest{
		Model: m, Temperature: req.Temperature, MaxTokens: req.MaxTokens, TopP: req.TopP,
		Stream: true, StreamOptions: &streamOptions{IncludeUsage: true},
	}
	for i, msg := range req.Messages {
		wm, err := wireMessages(msg)
		if err != nil {
			return nil, "", errdefs.Validationf("openai: messages[%d]: %w", i, err)
		}
		body.Messages = append(body.Messages, wm...)
	}
	for _, t := range req.Tools {
		params := t.Parameters
		if len(bytes.TrimSpace(params)) == 0 {
			params = json.RawMessage(emptyObjectSchema)
		}
		body.Tools = append(body.Tools, wireTool{Type: "function", Function: wireToolSpec{
			Name: t.Name, Description: t.Description, Parameters: params,
		}})
	}
	body.ResponseFormat = responseFormat(req.ResponseFormat)
	body.ToolChoice = toolChoice(req.ToolChoice, len(body.Tools))
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(body); err != nil {
		return nil, "", errdefs.Validationf("openai: encoding the request: %w", err)
	}
	return buf.Bytes(), m, nil
}

// wireMessages maps one message to the wire. Tool results become one
// "tool" message each, as Chat Completions wants; everything else keeps
// the message's role.
func wireMessages(msg model.Message) ([]wireMessage, error) {
	var out []wireMessage
	var text strings.Builder
	var parts []contentPart // only when an image is present
	var calls []wireToolCall
	for j, p := range msg.Parts {
		switch p.Type {
		case model.PartText:
			text.WriteString(p.Text)
			parts = append(parts, contentPart{Type: "text", Text: p.Text})
		case model.PartData:
			text.Write(p.Data)
			parts = append(parts, contentPart{Type: "text", Text: string(p.Data)})
		case model.PartFile:
			cp := filePart(p)
			if cp.Type == "text" {
				text.WriteString(cp.Text)
			}
			parts = append(parts, cp)
		case model.PartToolCall:
			if p.ToolCall == nil {
				return nil, fmt.Errorf("parts[%d]: tool_call part without a tool call", j)
			}
			calls = append(calls, wireToolCall{ID: p.ToolCall.ID, Type: "function", Function: wireFunction{
				Name: p.ToolCall.Name, Arguments: argumentsString(p.ToolCall.Arguments),
			}})
		case model.PartToolResult:
			if p.ToolResult == nil {
				return nil, fmt.Errorf("parts[%d]: tool_result part without a result", j)
			}
			out = append(out, wireMessage{Role: "tool", ToolCallID: p.ToolResult.ToolCallID, Content: p.ToolResult.Content})
		default:
			return nil, fmt.Errorf("parts[%d]: unsupported part type %q", j, p.Type)
		}
	}
	role := string(msg.Role)
	if role == string(model.RoleTool) {
		return out, nil // a tool message carries only results
	}
	wm := wireMessage{Role: role, ToolCalls: calls}
	switch {
	case hasImage(parts):
		wm.Content = parts
	case text.Len() == 0 && len(calls) > 0:
		wm.Content = nil
	case text.Len() == 0 && len(out) > 0:
		return out, nil // only tool results
	default:
		wm.Content = text.String()
	}
	// Results answer earlier calls, so they go before the message's own
	// content.
	return append(out, wm), nil
}

func hasImage(parts []contentPart) bool {
	for _, p := range parts {
		if p.Type == "image_url" {
			return true
		}
	}
	return false
}

// filePart sends images as image_url parts (inline bytes as a data URL),
// text files inline, and names anything else so the model knows it exists.
func filePart(p model.Part) contentPart {
	f := p.File
	if f == nil {
		return contentPart{Type: "text", Text: "[file]"}
	}
	switch {
	case strings.HasPrefix(p.MediaType, "image/") && f.URL != "":
		return contentPart{Type: "image_url", ImageURL: &imageURL{URL: f.URL}}
	case strings.HasPrefix(p.MediaType, "image/"):
		return contentPart{Type: "image_url", ImageURL: &imageURL{
			URL: "data:" + p.MediaType + ";base64," + base64.StdEncoding.EncodeToString(f.Bytes),
		}}
	case strings.HasPrefix(p.MediaType, "text/") && len(f.Bytes) > 0:
		return contentPart{Type: "text", Text: string(f.Bytes)}
	default:
		return contentPart{Type: "text", Text: fmt.Sprintf("[file %s (%s) %s]", f.Name, p.MediaType, f.URL)}
	}
}

// argumentsString renders stored arguments as the JSON text the wire
// wants. Arguments kept as a JSON string (malformed model output, see
// llm.Accumulator) go back as the text the model wrote.
func argumentsString(raw json.RawMessage) string {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 {
		return "{}"
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}
