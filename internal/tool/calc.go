package tool

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"agentd/internal/errdefs"
)

// Limits of the calculator's input. The length limit also bounds recursion;
// the depth limit turns pathological nesting into an error, not a deep stack.
const (
	maxExpressionLen   = 1000
	maxExpressionDepth = 100
)

// calcFunctions lists the calculator's functions for error messages.
const calcFunctions = "abs, ceil, cos, floor, ln, log, max, min, pow, round, sin, sqrt, tan"

// evaluate computes an arithmetic expression. Grammar, loosest first:
//
//	expr    = term { ("+" | "-") term }
//	term    = unary { ("*" | "/" | "%") unary }
//	unary   = ("-" | "+") unary | power
//	power   = primary [ ("^" | "**") unary ]     right-associative
//	primary = number | constant | function "(" [ expr { "," expr } ] ")" | "(" expr ")"
//
// so -2^2 is -4 and 2^3^2 is 512. Errors are Validation errors that give a
// 1-based position in the input.
func evaluate(src string) (float64, error) {
	if len(src) > maxExpressionLen {
		return 0, errdefs.Validationf("expression is %d bytes long, the limit is %d", len(src), maxExpressionLen)
	}
	p := parser{src: src}
	v, err := p.expr()
	if err != nil {
		return 0, err
	}
	if p.skipSpace(); p.pos < len(src) {
		return 0, p.unexpected()
	}
	return v, nil
}

// parser is a recursive-descent evaluator: it computes while it parses, so
// no syntax tree is built.
type parser struct {
	src   string
	pos   int // byte offset of the next unread character
	depth int
}

func (p *parser) errorf(pos int, format string, args ...any) error {
	return errdefs.Validationf("%s at position %d", fmt.Sprintf(format, args...), pos+1)
}

func (p *parser) unexpected() error {
	if p.pos >= len(p.src) {
		return p.errorf(p.pos, "unexpected end of expression")
	}
	r, _ := utf8.DecodeRuneInString(p.src[p.pos:])
	return p.errorf(p.pos, "unexpected character %q", r)
}

func (p *parser) skipSpace() {
	for p.pos < len(p.src) {
		switch p.src[p.pos] {
		case ' ', '\t', '\n', '\r':
			p.pos++
		default:
			return
		}
	}
}

// peek returns the next non-space byte, or 0 at the end.
func (p *parser) peek() byte {
	p.skipSpace()
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxExpressionDepth {
		return p.errorf(p.pos, "expression nested more than %d levels deep", maxExpressionDepth)
	}
	return nil
}

func (p *parser) leave() { p.depth-- }

func (p *parser) expr() (float64, error) {
	if err := p.enter(); err != nil {
		return 0, err
	}
	defer p.leave()
	left, err := p.term()
	for err == nil {
		op := p.peek()
		at := p.pos
		if op != '+' && op != '-' {
			return left, nil
		}
		p.pos++
		var right float64
		if right, err = p.term(); err != nil {
			break
		}
		if op == '+' {
			left += right
		} else {
			left -= right
		}
		err = p.finite(left, at)
	}
	return 0, err
}

func (p *parser) term() (float64, error) {
	left, err := p.unary()
	for err == nil {
		op := p.peek()
		at := p.pos
		if op != '*' && op != '/' && op != '%' || op == '*' && p.isPower() {
			return left, nil
		}
		p.pos++
		var right float64
		if right, err = p.unary(); err != nil {
			break
		}
		switch {
		case op == '*':
			left *= right
		case right == 0 && op == '/':
			return 0, p.errorf(at, "division by zero")
		case right == 0:
			return 0, p.errorf(at, "modulo by zero")
		case op == '/':
			left /= right
		default:
			left = math.Mod(left, right)
		}
		err = p.finite(left, at)
	}
	return 0, err
}

// isPower reports whether the operator at pos is "^" or "**".
func (p *parser) isPower() bool {
	rest := p.src[p.pos:]
	return len(rest) > 0 && rest[0] == '^' || len(rest) > 1 && rest[0] == '*' && rest[1] == '*'
}

func (p *parser) unary() (float64, error) {
	switch p.peek() {
	case '-', '+':
		if err := p.enter(); err != nil {
			return 0, err
		}
		defer p.leave()
		neg := p.src[p.pos] == '-'
		p.pos++
		v, err := p.unary()
		if neg {
			v = -v
		}
		return v, err
	}
	return p.power()
}

func (p *parser) power() (float64, error) {
	base, err := p.primary()
	if err != nil || p.peek() == 0 || !p.isPower() {
		return base, err
	}
	at := p.pos
	if p.src[p.pos] == '^' {
		p.pos++
	} else {
		p.pos += 2
	}
	exp, err := p.unary()
	if err != nil {
		return 0, err
	}
	v := math.Pow(base, exp)
	if math.IsNaN(v) {
		return 0, p.errorf(at, "%s to the power %s is not a real number", formatNumber(base), formatNumber(exp))
	}
	return v, p.finite(v, at)
}

func (p *parser) primary() (float64, error) {
	c := p.peek()
	switch {
	case c == '(':
		open := p.pos
		p.pos++
		v, err := p.expr()
		if err != nil {
			return 0, err
		}
		if p.peek() != ')' {
			if p.pos >= len(p.src) {
				return 0, p.errorf(open, "unclosed parenthesis")
			}
			return 0, p.unexpected()
		}
		p.pos++
		return v, nil
	case c >= '0' && c <= '9' || c == '.':
		return p.number()
	case c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_':
		return p.identifier()
	}
	return 0, p.unexpected()
}

// number scans digits [ "." digits ] [ ("e" | "E") [sign] digits ].
func (p *parser) number() (float64, error) {
	start := p.pos
	digits := p.digits()
	if p.pos < len(p.src) && p.src[p.pos] == '.' {
		p.pos++
		digits += p.digits()
	}
	if digits == 0 {
		return 0, p.errorf(start, "malformed number")
	}
	if p.pos < len(p.src) && (p.src[p.pos] == 'e' || p.src[p.pos] == 'E') {
		p.pos++
		if p.pos < len(p.src) && (p.src[p.pos] == '+' || p.src[p.pos] == '-') {
			p.pos++
		}
		if p.digits() == 0 {
			return 0, p.errorf(start, "malformed number %q (exponent needs digits)", p.src[start:p.pos])
		}
	}
	v, err := strconv.ParseFloat(p.src[start:p.pos], 64)
	if errors.Is(err, strconv.ErrRange) && !math.IsInf(v, 0) {
		err = nil // underflow to zero is a fine answer
	}
	if err != nil {
		return 0, p.errorf(start, "number %s out of range", p.src[start:p.pos])
	}
	return v, nil
}

func (p *parser) digits() int {
	start := p.pos
	for p.pos < len(p.src) && p.src[p.pos] >= '0' && p.src[p.pos] <= '9' {
		p.pos++
	}
	return p.pos - start
}

func (p *parser) identifier() (float64, error) {
	start := p.pos
	for p.pos < len(p.src) {
		c := p.src[p.pos]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_') {
			break
		}
		p.pos++
	}
	word := p.src[start:p.pos]
	name := strings.ToLower(word)
	if p.peek() != '(' {
		switch name {
		case "pi":
			return math.Pi, nil
		case "e":
			return math.E, nil
		}
		return 0, p.errorf(start, "unknown name %q (constants: pi, e; functions: %s)", word, calcFunctions)
	}
	args, err := p.arguments()
	if err != nil {
		return 0, err
	}
	v, err := applyFunction(name, args)
	if err != nil {
		return 0, p.errorf(start, "%s", err)
	}
	return v, p.finite(v, start)
}

// arguments parses "(" [ expr { "," expr } ] ")" after a function name.
func (p *parser) arguments() ([]float64, error) {
	open := p.pos
	p.pos++
	var args []float64
	if p.peek() == ')' {
		p.pos++
		return args, nil
	}
	for {
		v, err := p.expr()
		if err != nil {
			return nil, err
		}
		args = append(args, v)
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return args, nil
		case 0:
			return nil, p.errorf(open, "unclosed parenthesis")
		default:
			return nil, p.unexpected()
		}
	}
}

// finite rejects infinities and NaN produced at pos (overflow, or a domain
// error a function did not name itself).
func (p *parser) finite(v float64, pos int) error {
	if math.IsInf(v, 0) || math.IsNaN(v) {
		return p.errorf(pos, "result out of range")
	}
	return nil
}
