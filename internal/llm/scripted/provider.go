package scripted

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
	"agentd/internal/model"
)

// Provider answers chat turns from compiled rules. It is immutable after
// New and safe for concurrent use.
type Provider struct {
	rules []rule
}

var _ llm.Provider = (*Provider)(nil)

// New compiles cfg's rules. Errors are classified Validation and name the
// field at fault (rules[1].match: …).
func New(cfg Config) (*Provider, error) {
	rules, err := compile(cfg)
	if err != nil {
		return nil, err
	}
	return &Provider{rules: rules}, nil
}

// Stream answers req with the first matching rule. A conversation no rule
// matches, or a template that fails on it, is a Validation error.
func (p *Provider) Stream(ctx context.Context, req llm.Request) (llm.Stream, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	conv := inspect(req.Messages)
	purpose := req.Metadata[llm.MetadataPurpose]
	for i := range p.rules {
		r := &p.rules[i]
		if r.purpose != purpose {
			continue
		}
		d, ok := r.match(conv)
		if !ok {
			continue
		}
		d.Metadata, d.Model, d.System = req.Metadata, req.Model, systemText(req.Messages)
		s, err := r.start(ctx, d)
		if err != nil {
			return nil, errdefs.Validation(err)
		}
		s.usage.InputTokens = conv.words
		return s, nil
	}
	if purpose == llm.PurposeCompaction {
		return digest(ctx, conv), nil
	}
	if len(conv.results) > 0 {
		return nil, errdefs.Validationf("scripted: no rule matches a result of tool %q", conv.results[0].name)
	}
	return nil, errdefs.Validationf("scripted: no rule matches the message %q", conv.text)
}

// systemText is the text of the first system message, "" without one.
func systemText(msgs []model.Message) string {
	for _, m := range msgs {
		if m.Role == model.RoleSystem {
			return m.Text()
		}
	}
	return ""
}

// conversation is what rules match against.
type conversation struct {
	text    string       // last user message, trimmed
	results []toolResult // the trailing block of tool results
	turn    int          // assistant messages so far
	words   int64        // deterministic input token count
}

type toolResult struct{ name, content string }

func inspect(msgs []model.Message) conversation {
	var c conversation
	userSeen := false
	for i := len(msgs) - 1; i >= 0; i-- {
		m := msgs[i]
		c.words += messageWords(m)
		switch m.Role {
		case model.RoleAssistant:
			c.turn++
		case model.RoleSystem:
			c.turn += summarisedTurns(m)
		case model.RoleUser:
			if !userSeen {
				c.text = strings.TrimSpace(m.Text())
				if c.text == "" {
					c.text = describeParts(m.Parts)
				}
				userSeen = true
			}
		}
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		found := false
		for _, p := range msgs[i].Parts {
			if p.Type == model.PartToolResult && p.ToolResult != nil {
				found = true
				c.results = append(c.results, toolResult{
					name:    toolName(msgs[:i], *p.ToolResult),
					content: p.ToolResult.Content,
				})
			}
		}
		if !found {
			break
		}
	}
	return c
}

// toolName names the tool a result answers, looking the call up by id when
// the result does not say.
func toolName(before []model.Message, r model.ToolResult) string {
	if r.Name != "" {
		return r.Name
	}
	for i := len(before) - 1; i >= 0; i-- {
		for _, call := range before[i].ToolCalls() {
			if call.ID == r.ToolCallID {
				return call.Name
			}
		}
	}
	return ""
}

func messageWords(m model.Message) int64 {
	var n int64
	for _, p := range m.Parts {
		switch {
		case p.Type == model.PartText:
			n += countWords(p.Text)
		case p.ToolCall != nil:
			n += 1 + countWords(string(p.ToolCall.Arguments))
		case p.ToolResult != nil:
			n += countWords(p.ToolResult.Content)
		}
	}
	return n
}

func (r *rule) match(c conversation) (Data, bool) {
	d := Data{Text: c.text, Turn: c.turn}
	if r.afterTool == "" {
		if len(c.results) > 0 {
			return d, false
		}
	} else {
		i := r.resultIndex(c.results)
		if i < 0 {
			return d, false
		}
		d.Tool, d.ToolResult = c.results[i].name, c.results[i].content
	}
	if !strings.HasPrefix(c.text, r.prefix) {
		return d, false
	}
	if r.re != nil && !r.usesMatch {
		// No template reads the groups: only whether it matches counts.
		if !r.matchesAll && !r.re.MatchString(c.text) {
			return d, false
		}
	} else if r.re != nil {
		d.Groups = r.re.FindStringSubmatch(c.text)
		if d.Groups == nil {
			return d, false
		}
		for i, name := range r.re.SubexpNames() {
			if name != "" {
				if d.Named == nil {
					d.Named = make(map[string]string)
				}
				d.Named[name] = d.Groups[i]
			}
		}
	}
	return d, true
}

func (r *rule) resultIndex(results []toolResult) int {
	for i, res := range results {
		if r.afterTool == "*" || r.afterTool == res.name {
			return i
		}
	}
	return -1
}

// start renders the reply for d and returns a stream ready to emit it.
func (r *rule) start(ctx context.Context, d Data) (*stream, error) {
	s := &stream{ctx: ctx, finish: llm.FinishStop}
	var err error
	if s.delay, err = r.delay.duration(d); err != nil {
		return nil, err
	}
	think, err := r.think.render(d)
	if err != nil {
		return nil, err
	}
	if think != "" {
		s.think = strings.SplitAfter(think, " ")
	}
	if r.count != nil {
		n, err := r.count.number(d)
		if err != nil {
			return nil, err
		}
		s.gen = generator{prefix: r.count.prefix, suffix: r.count.suffix, sep: r.count.sep, n: n}
	} else {
		if s.text, err = r.reply.render(d); err != nil {
			return nil, err
		}
		s.split = r.split
	}
	for j, c := range r.calls {
		args, err := c.args.render(d)
		if err != nil {
			return nil, err
		}
		if !json.Valid([]byte(args)) {
			return nil, fmt.Errorf("%s: rendered %q is not valid JSON", c.args.path, args)
		}
		id := c.id
		if id == "" {
			id = fmt.Sprintf("call_%d_%d", d.Turn, j)
		}
		s.calls = append(s.calls, llm.ToolCallDelta{Index: j, ID: id, Name: c.name, Arguments: args})
	}
	if len(s.calls) > 0 {
		s.finish = llm.FinishToolCalls
	}
	return s, nil
}

// describeParts is what the rules see of a user message without text:
// its data parts as JSON and its files as "[file NAME (TYPE) URL]", so
// that a rule (the demo's echo) has something to answer.
func describeParts(parts []model.Part) string {
	var out []string
	for _, p := range parts {
		switch {
		case p.Type == model.PartData:
			out = append(out, string(p.Data))
		case p.Type == model.PartFile && p.File != nil:
			where := p.File.URL
			if where == "" {
				where = strconv.Itoa(len(p.File.Bytes)) + " bytes"
			}
			out = append(out, "[file "+p.File.Name+" ("+p.MediaType+") "+where+"]")
		}
	}
	return strings.Join(out, " ")
}
