package config

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"

	"agentd/internal/engine/flow"
	"agentd/internal/tool"
)

// DemoTools are the demo shop's tools (tool.DemoShop), which flows may
// call besides the built-in tools.
var DemoTools = []string{tool.LookupOrderName, tool.IssueRefundName, tool.CancelRefundName, tool.NotifyName}

// DemoNotifyFailEnv, when set to anything, makes the demo shop's notify
// tool fail, to show the refund flow undoing its refund.
const DemoNotifyFailEnv = "AGENTD_DEMO_NOTIFY_FAIL"

// DemoLedgerEnv names a file in which the demo shop keeps its refunds, so
// that replicas (and restarts) share them (tool.DemoShopOptions.Ledger);
// DemoPauseAfterEnv names a demo tool that blocks once its effect is
// recorded, for tests that kill a replica there.
const (
	DemoLedgerEnv     = "AGENTD_DEMO_LEDGER"
	DemoPauseAfterEnv = "AGENTD_DEMO_PAUSE_AFTER"
)

// FlowTool reports whether a flow may call the tool name.
func FlowTool(name string) bool {
	return slices.Contains(BuiltinTools, name) || slices.Contains(DemoTools, name)
}

// flowTools says which tools agent a's flow may call, as far as the file
// tells: the built-ins and the demo shop, http_get when tools.http_get
// configures it, the HTTP tools of tools.http, the agent's peer tools and its MCP servers' tools
// ("<server>__<tool>"; Build checks those against what the server lists).
func (c *Config) flowTools(a Agent) func(string) bool {
	return func(name string) bool {
		return FlowTool(name) || name == tool.HTTPGetName && c.Tools.HTTPGet != nil ||
			a.hasPeerTool(name) || a.isMCPTool(name) || slices.Contains(c.httpToolNames(), name)
	}
}

func registerDemoTools(reg *tool.Registry, getenv Env) error {
	shop := tool.NewDemoShop(tool.DemoShopOptions{FailNotify: getenv(DemoNotifyFailEnv) != "",
		Ledger: getenv(DemoLedgerEnv), PauseAfter: getenv(DemoPauseAfterEnv)})
	for _, t := range append(shop.Tools(), tool.DemoFileTools()...) {
		if err := reg.Register(t); err != nil {
			return fmt.Errorf("register demo tools: %w", err)
		}
	}
	return nil
}

// files is where a configuration's relative paths lead: a directory on
// disk (base), or a file system of its own (the embedded demo files).
type files struct {
	base string
	fs   fs.FS
}

// loadFlows loads and compiles the flow of every flow agent. Errors name
// the agent's flow key and the node.
func (c *Config) loadFlows(dir files) error {
	for i, a := range c.Agents {
		if a.Engine != "flow" {
			continue
		}
		f, problems, err := dir.checkFlow(a.Flow, c.flowTools(a))
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("agents[%d].flow: %q does not exist: a flow's path resolves against the configuration file's directory "+
				"(the demo's flows are written beside its configuration by `server --write-demo-config DIR`)", i, a.Flow)
		}
		if err == nil {
			err = problems.Err(a.Flow)
		}
		if err != nil {
			return fmt.Errorf("agents[%d].flow: %v", i, err)
		}
		if c.flows == nil {
			c.flows = map[int]*flow.Flow{}
		}
		c.flows[i] = f
	}
	return nil
}

// CheckFlow loads and compiles the flow at path (a directory of node
// files or a YAML file) against the tools agentd offers flows and returns
// every problem, warnings included; err is set when the flow cannot be
// read at all.
func CheckFlow(path string) (*flow.Flow, flow.Problems, error) {
	return files{base: "."}.checkFlow(path, FlowTool)
}

func (dir files) checkFlow(p string, tools func(string) bool) (*flow.Flow, flow.Problems, error) {
	fsys := dir.fs
	if fsys == nil {
		full := p
		if !filepath.IsAbs(p) {
			full = filepath.Join(dir.base, p)
		}
		fsys, p = os.DirFS(filepath.Dir(full)), filepath.Base(full)
	}
	spec, err := flow.Load(fsys, path.Clean(p))
	if err != nil {
		return nil, nil, err
	}
	f, problems := flow.Compile(spec, tools)
	return f, problems, nil
}

// flowTools registers the peer tools and MCP servers' tools of flow agent
// a, so that flow.New finds every tool its nodes call in the registry the
// server really has.
func (b *builder) flowTools(path string, a Agent) error {
	if _, err := b.federationTools(path, a); err != nil {
		return err
	}
	_, err := b.mcpTools(path, a, nil)
	return err
}
