package config

import (
	"fmt"
	"slices"
	"sort"
	"time"

	"agentd/internal/engine/loop"
	"agentd/internal/governor"
)

// A loop agent's guards over the tool calls its model proposes: tools
// whose calls wait for a human's approval (tool_settings) and a
// governance policy (governance). The loop engine enforces both
// (internal/engine/loop, vet.go and approval.go).

// ToolSettings tune one of an agent's tools.
type ToolSettings struct {
	// Approval "required" makes every call of the tool wait for a human's
	// approval; "none" (or unset) leaves it to the tool's own flag.
	Approval string `json:"approval,omitempty"`
}

// Governance is an agent's tool-call policy.
type Governance struct {
	// Mode is disabled (default), audit (verdicts recorded, nothing
	// blocked) or enforce.
	Mode  string           `json:"mode,omitempty"`
	Rules []GovernanceRule `json:"rules,omitempty"`
	// Governor reviews the calls no rule matched.
	Governor *Governor `json:"governor,omitempty"`
}

// GovernanceRule matches calls by tool name (a glob) and arguments (a CEL
// expression over `tool` and `args`) and gives a verdict.
type GovernanceRule struct {
	Name    string `json:"name,omitempty"`
	Tool    string `json:"tool,omitempty"`
	When    string `json:"when,omitempty"`
	Verdict string `json:"verdict"`
}

// Governor is an external policy service (internal/governor).
type Governor struct {
	URL string `json:"url"`
	// Timeout bounds each review (default 1s); enforce mode denies a call
	// the governor does not answer in time.
	Timeout Duration `json:"timeout,omitempty"`
	// AllowPrivate lets the governor be on loopback or a private network.
	AllowPrivate bool `json:"allow_private,omitempty"`
}

// validateGuards checks a loop agent's tool settings and governance
// without building anything (no CEL program, no client).
func (a Agent) validateGuards(path string) error {
	for _, name := range sortedKeys(a.ToolSettings) {
		s := a.ToolSettings[name]
		if !slices.Contains(a.Tools, name) && !a.isMCPTool(name) {
			return fmt.Errorf("%s.tool_settings.%s: not one of the agent's tools %q", path, name, a.Tools)
		}
		if s.Approval != "" && s.Approval != "none" && s.Approval != "required" {
			return fmt.Errorf("%s.tool_settings.%s.approval: %q: want required or none", path, name, s.Approval)
		}
	}
	if a.ApprovalTimeout < 0 {
		return fmt.Errorf("%s.approval_timeout: must not be negative, got %v", path, time.Duration(a.ApprovalTimeout))
	}
	_, err := a.guards(path)
	return err
}

// guards are what a loop agent's configuration makes of its guards.
type guards struct {
	approvalTools []string
	governance    loop.Governance
}

// guards builds the agent's approval list and governance policy; the
// policy's rules are compiled by loop.New, which names them.
func (a Agent) guards(path string) (guards, error) {
	var g guards
	for _, name := range sortedKeys(a.ToolSettings) {
		if a.ToolSettings[name].Approval == "required" {
			g.approvalTools = append(g.approvalTools, name)
		}
	}
	gov := a.Governance
	if gov == nil {
		return g, nil
	}
	g.governance = loop.Governance{Mode: gov.Mode}
	for _, r := range gov.Rules {
		g.governance.Rules = append(g.governance.Rules, loop.GovernanceRule{Name: r.Name, Tool: r.Tool, When: r.When, Verdict: r.Verdict})
	}
	if gv := gov.Governor; gv != nil {
		if gv.Timeout < 0 {
			return g, fmt.Errorf("%s.governance.governor.timeout: must not be negative, got %v", path, time.Duration(gv.Timeout))
		}
		c, err := governor.New(gv.URL, gv.Timeout.Or(loop.DefaultGovernorTimeout), gv.AllowPrivate)
		if err != nil {
			return g, fmt.Errorf("%s.governance.governor.url: %v", path, err)
		}
		g.governance.Governor, g.governance.GovernorTimeout = c, time.Duration(gv.Timeout)
	}
	if err := loop.CheckGovernance(fmt.Sprintf("loop agent %q", a.ID), g.governance); err != nil {
		return g, fmt.Errorf("%s: %v", path, err)
	}
	return g, nil
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
