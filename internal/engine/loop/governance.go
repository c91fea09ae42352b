package loop

import (
	"context"
	"encoding/json"
	"fmt"
	"path"
	"time"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common/types"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

// Governance sees every tool call the model proposes before it runs. Rules
// are tried in order, the first whose tool glob and CEL condition match
// gives the verdict; when none does, the Governor (if any) is asked; when
// there is none either, the call is allowed. In enforce mode a deny
// answers the call with an error result the model reads ("denied by
// policy: <rule>"), an ask waits for a human's approval; the governor
// failing or not answering within its timeout is a deny (fail closed). In
// audit mode every verdict is recorded and nothing is blocked. Either way
// each verdict is a governance event of the run.

// Governance modes.
const (
	GovernanceDisabled = "disabled"
	GovernanceAudit    = "audit"
	GovernanceEnforce  = "enforce"
)

// Verdicts of a rule or a governor.
const (
	VerdictAllow = "allow"
	VerdictDeny  = "deny"
	VerdictAsk   = "ask"
)

// DefaultGovernorTimeout bounds a governor's answer when none is set.
const DefaultGovernorTimeout = time.Second

// Governance is an agent's tool-call policy.
type Governance struct {
	// Mode is disabled (the zero value), audit or enforce.
	Mode  string
	Rules []GovernanceRule
	// Governor, when set, reviews the calls no rule matched.
	Governor Governor
	// GovernorTimeout bounds each review (0: DefaultGovernorTimeout).
	GovernorTimeout time.Duration
}

// GovernanceRule gives Verdict to the calls of the tools Tool matches (a
// path.Match glob; empty matches every tool) for which When holds (a CEL
// expression over `tool`, a string, and `args`, the arguments object;
// empty always holds).
type GovernanceRule struct {
	Name    string
	Tool    string
	When    string
	Verdict string
}

// Proposal is a proposed call as a governor reviews it.
type Proposal struct {
	RunID     string          `json:"run_id"`
	AgentID   string          `json:"agent_id"`
	Iteration int             `json:"iteration"`
	CallID    string          `json:"call_id"`
	Tool      string          `json:"tool"`
	Arguments json.RawMessage `json:"arguments"`
}

// Review is a governor's answer.
type Review struct {
	Verdict string `json:"verdict"`
	Reason  string `json:"reason,omitempty"`
}

// Governor reviews a proposed call: an external policy service. An error
// (or ctx ending) is a deny in enforce mode.
type Governor interface {
	Review(ctx context.Context, p Proposal) (Review, error)
}

// ruleCostLimit bounds one rule's evaluation: rules look at arguments,
// they do not compute.
const ruleCostLimit = 10_000

// policy is a compiled Governance.
type policy struct {
	mode     string
	rules    []rule
	governor Governor
	timeout  time.Duration
}

type rule struct {
	name, glob, verdict string
	when                cel.Program // nil: always
}

// compilePolicy checks g and compiles its conditions; who names the agent
// in errors. A disabled policy compiles to nil.
func compilePolicy(who string, g Governance) (*policy, error) {
	switch g.Mode {
	case "", GovernanceDisabled:
		return nil, nil
	case GovernanceAudit, GovernanceEnforce:
	default:
		return nil, errdefs.Validationf("%s: governance.mode %q: want disabled, audit or enforce", who, g.Mode)
	}
	env, err := cel.NewEnv(cel.Variable("tool", cel.StringType), cel.Variable("args", cel.MapType(cel.StringType, cel.DynType)),
		cel.CrossTypeNumericComparisons(true))
	if err != nil {
		return nil, errdefs.Internalf("%s: governance: %v", who, err)
	}
	p := &policy{mode: g.Mode, governor: g.Governor, timeout: g.GovernorTimeout}
	if p.timeout <= 0 {
		p.timeout = DefaultGovernorTimeout
	}
	for i, r := range g.Rules {
		c, err := compileRule(env, r)
		if err != nil {
			return nil, errdefs.Validationf("%s: governance.rules[%d]: %v", who, i, err)
		}
		if c.name == "" {
			c.name = fmt.Sprintf("rules[%d]", i)
		}
		p.rules = append(p.rules, c)
	}
	return p, nil
}

func compileRule(env *cel.Env, r GovernanceRule) (rule, error) {
	c := rule{name: r.Name, glob: r.Tool, verdict: r.Verdict}
	switch r.Verdict {
	case VerdictAllow, VerdictDeny, VerdictAsk:
	default:
		return c, fmt.Errorf("verdict %q: want allow, deny or ask", r.Verdict)
	}
	if _, err := path.Match(r.Tool, ""); err != nil {
		return c, fmt.Errorf("tool %q: not a valid glob: %v", r.Tool, err)
	}
	if r.When == "" {
		return c, nil
	}
	ast, iss := env.Compile(r.When)
	if iss.Err() != nil {
		return c, fmt.Errorf("when %q: %v", r.When, iss.Err())
	}
	if ast.OutputType() != cel.BoolType && ast.OutputType() != cel.DynType {
		return c, fmt.Errorf("when %q: evaluates to %s, not a bool", r.When, ast.OutputType())
	}
	prog, err := env.Program(ast, cel.CostLimit(ruleCostLimit))
	if err != nil {
		return c, fmt.Errorf("when %q: %v", r.When, err)
	}
	c.when = prog
	return c, nil
}

// judgement is the policy's verdict on one call and where it came from.
type judgement struct {
	verdict string
	source  string // "rule", "governor" or "default"
	rule    string
	reason  string
}

// judge gives the verdict on call p. A rule whose condition cannot be
// evaluated (a missing argument it reads, a wrong type) matches with a
// deny: a policy that cannot tell must not let the call through.
func (pol *policy) judge(ctx context.Context, p Proposal) judgement {
	var args map[string]any
	if len(p.Arguments) > 0 {
		_ = json.Unmarshal(p.Arguments, &args) // the registry refuses a non-object later
	}
	if args == nil {
		args = map[string]any{}
	}
	for _, r := range pol.rules {
		if ok, _ := path.Match(r.glob, p.Tool); r.glob != "" && !ok {
			continue
		}
		if r.when == nil {
			return judgement{verdict: r.verdict, source: "rule", rule: r.name}
		}
		out, _, err := r.when.Eval(map[string]any{"tool": p.Tool, "args": args})
		if err != nil {
			return judgement{verdict: VerdictDeny, source: "rule", rule: r.name, reason: "its condition could not be evaluated: " + err.Error()}
		}
		if b, ok := out.(types.Bool); ok && bool(b) {
			return judgement{verdict: r.verdict, source: "rule", rule: r.name}
		}
	}
	if pol.governor == nil {
		return judgement{verdict: VerdictAllow, source: "default"}
	}
	return pol.review(ctx, p)
}

// review asks the governor, failing closed.
func (pol *policy) review(ctx context.Context, p Proposal) judgement {
	ctx, cancel := context.WithTimeout(ctx, pol.timeout)
	defer cancel()
	rv, err := pol.governor.Review(ctx, p)
	if err == nil && ctx.Err() != nil {
		err = ctx.Err()
	}
	switch {
	case err != nil && ctx.Err() == context.DeadlineExceeded:
		return judgement{verdict: VerdictDeny, source: "governor", rule: "governor", reason: fmt.Sprintf("no verdict within %v", pol.timeout)}
	case err != nil:
		return judgement{verdict: VerdictDeny, source: "governor", rule: "governor", reason: "governor failed: " + tool.ModelText(err)}
	case rv.Verdict != VerdictAllow && rv.Verdict != VerdictDeny && rv.Verdict != VerdictAsk:
		return judgement{verdict: VerdictDeny, source: "governor", rule: "governor", reason: fmt.Sprintf("governor answered verdict %q (want allow, deny or ask)", rv.Verdict)}
	}
	return judgement{verdict: rv.Verdict, source: "governor", rule: "governor", reason: rv.Reason}
}

// deniedText is the error result a denied call gets.
func (j judgement) deniedText() string {
	s := "denied by policy: " + j.rule
	if j.reason != "" {
		s += " (" + j.reason + ")"
	}
	return s
}

// CheckGovernance compiles g as New would, for configuration checks that
// build no engine; who names the agent in errors.
func CheckGovernance(who string, g Governance) error {
	_, err := compilePolicy(who, g)
	return err
}
