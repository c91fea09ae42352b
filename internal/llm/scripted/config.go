package scripted

import (
	"encoding/json"
	"fmt"
	"regexp"
	"regexp/syntax"
	"strconv"
	"strings"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/llm"
)

// Config is the scripted provider's configuration, as read from YAML.
//
// An example that answers like the demo echo agent:
//
//	rules:
//	  - match: '^stream (\d+) every (\d+)ms$'
//	    count: {number: '{{index .Groups 1}}'}
//	    delay: '{{index .Groups 2}}ms'
//	  - match: '^stream (\d+)$'
//	    count: {number: '{{index .Groups 1}}'}
//	  - reply: '{{.Text}}'
type Config struct {
	// Rules are tried in order; the first that matches answers the turn.
	Rules []Rule `json:"rules"`
}

// Rule matches a conversation and says how to answer it. Conditions that
// are set must all hold; a rule without conditions matches any user
// message.
//
// Reply, Count.Number, Delay and string-valued ToolCall.Arguments are
// text/template templates over Data (see Data for the fields and
// functions).
type Rule struct {
	// Name labels the rule for readers of the configuration.
	Name string `json:"name,omitempty"`
	// Prefix matches when the last user message (trimmed) starts with it.
	Prefix string `json:"prefix,omitempty"`
	// Match is a regular expression (RE2) the last user message (trimmed)
	// must match; its groups are Data.Groups.
	Match string `json:"match,omitempty"`
	// AfterTool, when set, makes the rule match only when the conversation
	// ends with a result of this tool ("*" for any tool). Rules without it
	// never match after a tool result, so a rule that calls a tool does not
	// fire again on the tool's answer.
	AfterTool string `json:"after_tool,omitempty"`
	// Reply is the answer text, streamed in tokens as Split says.
	Reply string `json:"reply,omitempty"`
	// Think, when set, is the model's visible thinking, streamed word by
	// word before the reply as reasoning chunks (what a provider streams
	// as reasoning_content); a template like Reply.
	Think string `json:"think,omitempty"`
	// Split is how Reply is cut into tokens: "words" (default; each token
	// carries the whitespace before it), "chars", or "none".
	Split string `json:"split,omitempty"`
	// Count generates numbered tokens instead of Reply.
	Count *Count `json:"count,omitempty"`
	// ToolCalls are streamed after the text, one chunk per call.
	ToolCalls []ToolCall `json:"tool_calls,omitempty"`
	// Delay is the pause between tokens, a duration ("20ms") or a template
	// producing one; empty or "0" streams as fast as the consumer reads.
	Delay string `json:"delay,omitempty"`
	// Purpose, when set, makes the rule answer only requests made for
	// that purpose (llm.MetadataPurpose): "compaction" for the loop
	// engine's summaries of old conversation. Rules without it never
	// answer such requests; when none has it, the built-in digest does
	// (compaction.go).
	Purpose string `json:"purpose,omitempty"`
}

// Count generates the tokens "tok1 tok2 … tokN".
type Count struct {
	// Number is how many tokens, an integer or a template producing one.
	// (Not "n": YAML 1.1 reads a bare n as false.)
	Number string `json:"number"`
	// Format formats token i; it must contain exactly one %d. Default
	// "tok%d".
	Format string `json:"format,omitempty"`
	// Separator goes before every token but the first. Default " ".
	Separator string `json:"separator,omitempty"`
	// Max bounds Number (which may come from user text). Default 1,000,000.
	Max int `json:"max,omitempty"`
}

// ToolCall is a tool call a rule makes.
type ToolCall struct {
	// ID defaults to "call_<turn>_<position>", where turn counts the
	// assistant messages already in the conversation.
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is a JSON object given literally, or a string holding a
	// template that renders to JSON (use the json function to quote text:
	// '{"expr": {{json (index .Groups 1)}}}').
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

// Limits on values that may come from user text.
const (
	defaultMaxCount = 1_000_000
	maxDelay        = time.Minute
)

type splitMode uint8

const (
	splitWords splitMode = iota
	splitChars
	splitNone
)

// rule is a compiled Rule.
type rule struct {
	path      string // "rules[3]" for errors
	prefix    string
	re        *regexp.Regexp
	afterTool string
	purpose   string
	reply     tmpl
	think     tmpl
	split     splitMode
	count     *count
	calls     []toolCall
	delay     tmpl
	// usesMatch is set when a template may read Data.Groups or
	// Data.Named; without it, matching skips collecting submatches, and
	// a regexp that matchesAll (a catch-all like (?s).*) is not run.
	usesMatch  bool
	matchesAll bool
}

// matchesAll reports whether re matches every string: it matches the
// empty string and has no empty-width assertion (^, $, \A, \z, \b, \B),
// so it matches the empty string at the start of any input.
func matchesAll(re *regexp.Regexp) bool {
	if !re.MatchString("") {
		return false
	}
	tree, err := syntax.Parse(re.String(), syntax.Perl)
	return err == nil && !hasAssertion(tree)
}

func hasAssertion(re *syntax.Regexp) bool {
	switch re.Op {
	case syntax.OpBeginLine, syntax.OpEndLine, syntax.OpBeginText, syntax.OpEndText,
		syntax.OpWordBoundary, syntax.OpNoWordBoundary:
		return true
	}
	for _, sub := range re.Sub {
		if hasAssertion(sub) {
			return true
		}
	}
	return false
}

type count struct {
	n              tmpl
	prefix, suffix string // around the %d of Count.Token
	sep            string
	max            int
}

type toolCall struct {
	id   string
	name string
	args tmpl
}

func compile(cfg Config) ([]rule, error) {
	rules := make([]rule, len(cfg.Rules))
	for i, r := range cfg.Rules {
		c, err := compileRule(fmt.Sprintf("rules[%d]", i), r)
		if err != nil {
			return nil, errdefs.Validation(err)
		}
		rules[i] = c
	}
	return rules, nil
}

func compileRule(path string, r Rule) (rule, error) {
	c := rule{path: path, prefix: r.Prefix, afterTool: r.AfterTool, purpose: r.Purpose}
	if r.Purpose != "" && r.Purpose != llm.PurposeCompaction {
		return c, fmt.Errorf("%s.purpose: unknown purpose %q (want %s)", path, r.Purpose, llm.PurposeCompaction)
	}
	var err error
	if r.Match != "" {
		if c.re, err = regexp.Compile(r.Match); err != nil {
			return c, fmt.Errorf("%s.match: %w", path, err)
		}
		c.matchesAll = matchesAll(c.re)
	}
	if r.Reply == "" && r.Count == nil && len(r.ToolCalls) == 0 {
		return c, fmt.Errorf("%s: set reply, count or tool_calls", path)
	}
	if r.Reply != "" && r.Count != nil {
		return c, fmt.Errorf("%s: reply and count exclude each other", path)
	}
	if c.think, err = parseTemplate(path+".think", r.Think); err != nil {
		return c, err
	}
	if c.reply, err = parseTemplate(path+".reply", r.Reply); err != nil {
		return c, err
	}
	switch r.Split {
	case "", "words":
		c.split = splitWords
	case "chars":
		c.split = splitChars
	case "none":
		c.split = splitNone
	default:
		return c, fmt.Errorf("%s.split: unknown mode %q (want words, chars or none)", path, r.Split)
	}
	if r.Count != nil {
		if c.count, err = compileCount(path+".count", *r.Count); err != nil {
			return c, err
		}
	}
	for j, tc := range r.ToolCalls {
		call, err := compileToolCall(fmt.Sprintf("%s.tool_calls[%d]", path, j), tc)
		if err != nil {
			return c, err
		}
		c.calls = append(c.calls, call)
	}
	if c.delay, err = parseTemplate(path+".delay", r.Delay); err != nil {
		return c, err
	}
	if c.delay.t == nil {
		if _, err := c.delay.duration(Data{}); err != nil {
			return c, err
		}
	}
	c.usesMatch = c.reply.usesMatch() || c.think.usesMatch() || c.delay.usesMatch() || c.count != nil && c.count.n.usesMatch()
	for _, call := range c.calls {
		c.usesMatch = c.usesMatch || call.args.usesMatch()
	}
	return c, nil
}

func compileCount(path string, n Count) (*count, error) {
	c := &count{sep: n.Separator, max: n.Max}
	if c.sep == "" {
		c.sep = " "
	}
	if c.max <= 0 {
		c.max = defaultMaxCount
	}
	format := n.Format
	if format == "" {
		format = "tok%d"
	}
	if strings.Count(format, "%") != 1 || !strings.Contains(format, "%d") {
		return nil, fmt.Errorf("%s.format: %q must contain exactly one %%d and no other %%", path, format)
	}
	c.prefix, c.suffix, _ = strings.Cut(format, "%d")
	if strings.TrimSpace(n.Number) == "" {
		return nil, fmt.Errorf("%s.number: required", path)
	}
	var err error
	if c.n, err = parseTemplate(path+".number", n.Number); err != nil {
		return nil, err
	}
	if c.n.t == nil {
		if _, err := c.number(Data{}); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// number renders Number and checks its bounds; it may come from user
// text.
func (c *count) number(d Data) (int, error) {
	s, err := c.n.render(d)
	if err != nil {
		return 0, err
	}
	n, err := strconv.Atoi(strings.TrimSpace(s))
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s: %q is not a non-negative integer", c.n.path, s)
	}
	if n > c.max {
		return 0, fmt.Errorf("%s: %d exceeds the maximum of %d", c.n.path, n, c.max)
	}
	return n, nil
}

func compileToolCall(path string, tc ToolCall) (toolCall, error) {
	c := toolCall{id: tc.ID, name: tc.Name}
	if tc.Name == "" {
		return c, fmt.Errorf("%s.name: required", path)
	}
	raw := strings.TrimSpace(string(tc.Arguments))
	switch {
	case raw == "" || raw == "null":
		c.args = tmpl{lit: "{}"}
	case raw[0] == '{':
		if !json.Valid([]byte(raw)) {
			return c, fmt.Errorf("%s.arguments: invalid JSON object", path)
		}
		c.args = tmpl{lit: raw}
	case raw[0] == '"':
		var src string
		if err := json.Unmarshal([]byte(raw), &src); err != nil {
			return c, fmt.Errorf("%s.arguments: %w", path, err)
		}
		var err error
		if c.args, err = parseTemplate(path+".arguments", src); err != nil {
			return c, err
		}
		if c.args.t == nil && !json.Valid([]byte(src)) {
			return c, fmt.Errorf("%s.arguments: %q is not valid JSON", path, src)
		}
	default:
		return c, fmt.Errorf("%s.arguments: want a JSON object or a template string", path)
	}
	return c, nil
}
