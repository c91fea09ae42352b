package scripted

import (
	"strconv"
	"strings"
	"text/template"
	"text/template/parse"
)

// fastTemplate renders a template made only of text and actions of the
// forms {{.Text}}, {{.Tool}}, {{.ToolResult}}, {{.Turn}} and
// {{index .Groups N}} by concatenation, which is what text/template
// produces for them. Anything else — other fields, functions, pipelines,
// control structures — leaves it unset, and the template runs through
// text/template. So does a render the fast path cannot finish (a group
// index out of range), so that errors read exactly as text/template
// words them.
type fastTemplate struct {
	segs []segment // nil: not a fast template
}

// field names what a segment substitutes.
type field uint8

const (
	fieldLiteral field = iota
	fieldText
	fieldTool
	fieldToolResult
	fieldTurn
	fieldGroup
)

// segment is literal text or one substitution.
type segment struct {
	field field
	text  string // the literal, for fieldLiteral
	group int    // the index, for fieldGroup
}

// compileFast returns t's fast form, or the zero fastTemplate when t
// uses anything beyond plain text and the substitutions listed above.
func compileFast(t *template.Template) fastTemplate {
	// A template with associated templates ({{define}}) may be empty
	// itself or be redefined; leave those to text/template.
	if t.Tree == nil || t.Tree.Root == nil || len(t.Templates()) != 1 || t.Templates()[0] != t {
		return fastTemplate{}
	}
	segs := make([]segment, 0, len(t.Tree.Root.Nodes))
	for _, n := range t.Tree.Root.Nodes {
		switch n := n.(type) {
		case *parse.TextNode:
			segs = append(segs, segment{text: string(n.Text)})
		case *parse.ActionNode:
			s, ok := fastAction(n.Pipe)
			if !ok {
				return fastTemplate{}
			}
			segs = append(segs, s)
		default:
			return fastTemplate{}
		}
	}
	return fastTemplate{segs: segs}
}

// fastAction recognises the pipeline of one supported action.
func fastAction(p *parse.PipeNode) (segment, bool) {
	if p == nil || p.IsAssign || len(p.Decl) > 0 || len(p.Cmds) != 1 {
		return segment{}, false
	}
	args := p.Cmds[0].Args
	switch len(args) {
	case 1:
		f, ok := args[0].(*parse.FieldNode)
		if !ok || len(f.Ident) != 1 {
			return segment{}, false
		}
		switch f.Ident[0] {
		case "Text":
			return segment{field: fieldText}, true
		case "Tool":
			return segment{field: fieldTool}, true
		case "ToolResult":
			return segment{field: fieldToolResult}, true
		case "Turn":
			return segment{field: fieldTurn}, true
		}
	case 3:
		fn, ok1 := args[0].(*parse.IdentifierNode)
		f, ok2 := args[1].(*parse.FieldNode)
		num, ok3 := args[2].(*parse.NumberNode)
		if !ok1 || !ok2 || !ok3 || fn.Ident != "index" || len(f.Ident) != 1 || f.Ident[0] != "Groups" {
			return segment{}, false
		}
		// Plain decimal only: other spellings (0x1, 'a', 1e0) are left to
		// text/template's rules for constants.
		i, err := strconv.Atoi(num.Text)
		if err != nil || i < 0 || strconv.Itoa(i) != num.Text {
			return segment{}, false
		}
		return segment{field: fieldGroup, group: i}, true
	}
	return segment{}, false
}

// render concatenates the segments for d. ok is false when f is not a
// fast template or d lacks a group it names.
func (f fastTemplate) render(d Data) (string, bool) {
	switch len(f.segs) {
	case 0:
		return "", f.segs != nil
	case 1:
		return f.segs[0].value(d) // a lone value needs no copy
	}
	n := 0
	for _, s := range f.segs {
		v, ok := s.value(d)
		if !ok {
			return "", false
		}
		n += len(v)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range f.segs {
		v, _ := s.value(d)
		b.WriteString(v)
	}
	return b.String(), true
}

// value is what s writes for d, as text/template prints it.
func (s segment) value(d Data) (string, bool) {
	switch s.field {
	case fieldText:
		return d.Text, true
	case fieldTool:
		return d.Tool, true
	case fieldToolResult:
		return d.ToolResult, true
	case fieldTurn:
		return strconv.Itoa(d.Turn), true
	case fieldGroup:
		if s.group >= len(d.Groups) {
			return "", false
		}
		return d.Groups[s.group], true
	}
	return s.text, true
}
