package openai

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// One streamed chunk (or, with Message instead of Delta, a whole
// non-streamed completion), as received.
type chunkWire struct {
	Choices []choiceWire    `json:"choices"`
	Usage   *usageWire      `json:"usage"`
	Error   json.RawMessage `json:"error"`
	Object  string          `json:"object"`
	Message string          `json:"message"` // vLLM's top-level error message
}

type choiceWire struct {
	Index        int          `json:"index"`
	Delta        *messageWire `json:"delta"`
	Message      *messageWire `json:"message"`
	FinishReason string       `json:"finish_reason"`
}

type messageWire struct {
	Content          string         `json:"content"`
	ReasoningContent string         `json:"reasoning_content"` // DeepSeek, llama.cpp, vLLM
	Reasoning        string         `json:"reasoning"`         // OpenRouter, Ollama
	ToolCalls        []toolCallWire `json:"tool_calls"`
}

type toolCallWire struct {
	Index    *int   `json:"index"`
	ID       string `json:"id"`
	Function struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"` // a string, or an object on some servers
	} `json:"function"`
}

type usageWire struct {
	PromptTokens     int64 `json:"prompt_tokens"`
	CompletionTokens int64 `json:"completion_tokens"`
	TotalTokens      int64 `json:"total_tokens"`
}

// decoder turns a Server-Sent Events body into chunks.
type decoder struct {
	r     *bufio.Reader
	url   string // for error messages
	data  []byte // data of the event being read
	ready []byte // a complete event waiting to be dispatched
	long  []byte // a line longer than the reader's buffer
	calls callIndexer

	done     bool // saw [DONE]
	finished bool // saw a finish_reason
	eof      bool
}

func newDecoder(r io.Reader, url string) *decoder {
	return &decoder{r: bufio.NewReaderSize(r, 16<<10), url: url}
}

// next returns the next non-empty chunk, io.EOF at [DONE] or at a clean
// end of the body, or the error that ended the stream.
func (d *decoder) next() (llm.Chunk, error) {
	for {
		data, err := d.event()
		if err != nil {
			return llm.Chunk{}, err
		}
		if string(data) == "[DONE]" {
			d.done = true
			return llm.Chunk{}, io.EOF
		}
		c, err := d.chunk(data)
		if err != nil {
			return llm.Chunk{}, err
		}
		if !empty(c) {
			return c, nil
		}
	}
}

func empty(c llm.Chunk) bool {
	return c.Text == "" && c.Reasoning == "" && len(c.ToolCalls) == 0 && c.Usage == nil && c.FinishReason == ""
}

// event returns the data of the next event. Per the SSE format, data lines
// accumulate until a blank line; as a courtesy to servers that omit the
// blank line, a data line that follows a complete JSON value starts a new
// event.
func (d *decoder) event() ([]byte, error) {
	if d.ready != nil {
		data := d.ready
		d.ready = nil
		return data, nil
	}
	d.data = d.data[:0]
	for {
		line, err := d.line()
		if err != nil {
			if errors.Is(err, io.EOF) && len(d.data) > 0 {
				return d.data, nil
			}
			return nil, err
		}
		if len(line) == 0 {
			if len(d.data) > 0 {
				return d.data, nil
			}
			continue
		}
		value, ok := dataField(line)
		if !ok {
			continue // comments (keep-alives), event:, id:, retry:
		}
		if len(d.data) > 0 && json.Valid(d.data) {
			d.ready = append([]byte(nil), value...)
			return d.data, nil
		}
		if len(d.data) > 0 {
			d.data = append(d.data, '\n')
		}
		d.data = append(d.data, value...)
	}
}

func dataField(line []byte) ([]byte, bool) {
	rest, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok {
		return nil, false
	}
	if len(rest) > 0 && rest[0] == ' ' {
		rest = rest[1:]
	}
	return rest, true
}

// line returns the next line without its line ending. The slice is valid
// until the next call.
func (d *decoder) line() ([]byte, error) {
	if d.eof {
		return nil, io.EOF
	}
	line, err := d.r.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		d.long = append(d.long[:0], line...)
		for errors.Is(err, bufio.ErrBufferFull) {
			line, err = d.r.ReadSlice('\n')
			d.long = append(d.long, line...)
		}
		line = d.long
	}
	if errors.Is(err, io.EOF) {
		d.eof = true
		if len(line) == 0 {
			return d.endOfBody()
		}
	} else if err != nil {
		return nil, err
	}
	line = bytes.TrimSuffix(line, []byte("\n"))
	return bytes.TrimSuffix(line, []byte("\r")), nil
}

// endOfBody accepts a body that ends without [DONE] when the model already
// finished; otherwise the stream was cut short.
func (d *decoder) endOfBody() ([]byte, error) {
	if d.done || d.finished {
		return nil, io.EOF
	}
	return nil, errdefs.NotAvailablef("openai: stream from %s ended before the model finished: %w", d.url, io.ErrUnexpectedEOF)
}

// chunk converts one event's JSON into a chunk.
func (d *decoder) chunk(data []byte) (llm.Chunk, error) {
	var w chunkWire
	if err := json.Unmarshal(data, &w); err != nil {
		return llm.Chunk{}, errdefs.NotAvailablef("openai: stream from %s: malformed chunk %.200q: %w", d.url, data, err)
	}
	if e, ok := decodeErrorField(w.Error); ok {
		return llm.Chunk{}, streamError(d.url, e)
	}
	if w.Object == "error" {
		return llm.Chunk{}, streamError(d.url, apiError{Message: w.Message})
	}
	var c llm.Chunk
	if u := w.Usage; u != nil {
		c.Usage = &model.TokenUsage{InputTokens: u.PromptTokens, OutputTokens: u.CompletionTokens, TotalTokens: u.TotalTokens}
	}
	if len(w.Choices) == 0 {
		return c, nil
	}
	ch := w.Choices[0]
	if ch.FinishReason != "" {
		c.FinishReason = ch.FinishReason
		d.finished = true
	}
	m := ch.Delta
	if m == nil {
		m = ch.Message
	}
	if m == nil {
		return c, nil
	}
	c.Text = m.Content
	c.Reasoning = m.ReasoningContent + m.Reasoning
	for pos, tc := range m.ToolCalls {
		c.ToolCalls = append(c.ToolCalls, llm.ToolCallDelta{
			Index:     d.calls.index(tc.Index, tc.ID, pos),
			ID:        tc.ID,
			Name:      tc.Function.Name,
			Arguments: argumentsFragment(tc.Function.Arguments),
		})
	}
	return c, nil
}

// argumentsFragment accepts arguments as a JSON string (the standard) or
// as a JSON value (some servers send the object itself).
func argumentsFragment(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	if raw[0] == '"' {
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return string(raw)
}

// callIndexer gives each tool call of a stream a stable index. Servers
// disagree: OpenAI sends an index with every fragment and the id on the
// first; llama.cpp omits ids; some send each whole call in its own chunk
// with index 0 every time, or with no index at all. A new id therefore
// starts a new call, and an id-less fragment continues the latest call
// sent under its wire index.
type callIndexer struct {
	byWire map[int]int
	byID   map[string]int
	n      int
}

func (x *callIndexer) index(wire *int, id string, pos int) int {
	w := pos
	if wire != nil {
		w = *wire
	}
	if x.byWire == nil {
		x.byWire, x.byID = make(map[int]int), make(map[string]int)
	}
	if id != "" {
		if i, ok := x.byID[id]; ok {
			return i
		}
		i := x.n
		x.n++
		x.byID[id], x.byWire[w] = i, i
		return i
	}
	if i, ok := x.byWire[w]; ok {
		return i
	}
	i := x.n
	x.n++
	x.byWire[w] = i
	return i
}
