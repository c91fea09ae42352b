package config

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"sigs.k8s.io/yaml"

	"agentd/internal/agent"
	"agentd/internal/engine/flow"
	"agentd/internal/engine/graph"
	"agentd/internal/errdefs"
	"agentd/internal/llm/scripted"
	"agentd/internal/strictjson"
)

// Config is agentd's configuration file: the server, the model providers
// and the agents. Secrets never live here: provider keys are read from the
// environment variables the file names.
type Config struct {
	Server    Server              `json:"server"`
	Providers map[string]Provider `json:"providers"`
	// Push configures the delivery of A2A push notifications (push.go).
	Push Push `json:"push,omitempty"`
	// Tools configures the built-in tools that need it.
	Tools  Tools   `json:"tools,omitempty"`
	Agents []Agent `json:"agents"`
	// Federation configures the agents served by A2A peers (engine
	// remote).
	Federation Federation `json:"federation,omitempty"`

	// mcp are the MCP servers Build connected to, by name (Close ends them).
	mcp map[string]mcpConn
	// Retention prunes the events and checkpoints of finished runs
	// (retention.go).
	Retention *Retention `json:"retention,omitempty"`
	// Auth, when set, requires an API key or a JWT on every route but the
	// public cards and the health probes (auth.go).
	Auth *Auth `json:"auth,omitempty"`
	// Limits bounds request rates, runs, streams and bodies (limits.go).
	Limits Limits `json:"limits,omitempty"`
	// Prices are what each model's tokens cost, by the model name the
	// model steps report (prices.go): trajectories show the cost of each
	// model call and of the run.
	Prices map[string]Price `json:"prices,omitempty"`
	// Memory configures the long-term memory: embeddings, indexed fields
	// (memory.go).
	Memory *Memory `json:"memory,omitempty"`

	// flows holds the compiled flow of each flow agent, by agent index.
	flows map[int]*flow.Flow
	// workflows holds the loaded workflow of each graph agent, by agent
	// index.
	workflows map[int]*graph.Workflow
}

// Server configures the HTTP server.
type Server struct {
	// Addr is the listen address (default 127.0.0.1:8080).
	Addr string `json:"addr,omitempty"`
	// PublicURL is the externally visible base URL used in agent cards
	// (default: derived from each request).
	PublicURL string `json:"public_url,omitempty"`
	// DefaultAgent is served at /.well-known/agent-card.json (default: the
	// first agent).
	DefaultAgent string `json:"default_agent,omitempty"`
	// MaxBodyBytes limits request bodies (default 1 MiB).
	MaxBodyBytes int64 `json:"max_body_bytes,omitempty"`
	// Heartbeat is the SSE keep-alive interval (default 15s).
	Heartbeat Duration `json:"heartbeat,omitempty"`
	// CancelGrace is how long a cooperative cancel may take (default 5s).
	CancelGrace Duration `json:"cancel_grace,omitempty"`
	// ShutdownTimeout bounds the drain on SIGTERM (default 30s).
	ShutdownTimeout Duration `json:"shutdown_timeout,omitempty"`
	// LeaseTTL is how long a replica's claim on a running run lasts without
	// renewal (default 5s): a killed replica's runs resume on another one
	// after it.
	LeaseTTL Duration `json:"lease_ttl,omitempty"`
	// OutageBound is how long a replica keeps its runs while the database
	// is unreachable (default 30s): past it, counted from a run's lease
	// expiry, the replica gives the run up and another resumes it.
	OutageBound Duration `json:"outage_bound,omitempty"`
	// ReplicaURL is the base URL the other replicas reach this one at, to
	// ask whether it still executes a run whose lease expired (default:
	// http:// and the listen address, an unspecified host as loopback).
	ReplicaURL string `json:"replica_url,omitempty"`
	// MetricsAddr serves GET /metrics (Prometheus) on a listener of its
	// own, e.g. "127.0.0.1:9090"; MetricsOnMain serves it on the main
	// listener too, behind its authentication (telemetry.go).
	MetricsAddr   string `json:"metrics_addr,omitempty"`
	MetricsOnMain bool   `json:"metrics_on_main,omitempty"`
	// MaxCallDepth bounds the agents on one request's call chain (default
	// 8) and MaxFanOut the child runs one run may open (default 256)
	// (calltree.go).
	MaxCallDepth int `json:"max_call_depth,omitempty"`
	MaxFanOut    int `json:"max_fan_out,omitempty"`
}

// Tools configures built-in tools.
type Tools struct {
	// HTTPGet, when set, registers the http_get tool for agents to list.
	HTTPGet *HTTPGet `json:"http_get,omitempty"`
	// MaxResultBytes caps the text of every tool's result the model reads
	// (default 100000); a marker at the end says it was cut.
	MaxResultBytes int `json:"max_result_bytes,omitempty"`
	// HTTP declares HTTP tools and Effects overrides tools' effects and
	// doubt policies, by tool name (effects.go).
	HTTP    []HTTPTool                `json:"http,omitempty"`
	Effects map[string]EffectSettings `json:"effects,omitempty"`
}

// HTTPGet configures the http_get tool: it fetches only from the listed
// hosts, never from private addresses unless allow_private says so.
type HTTPGet struct {
	// AllowHosts are exact host names or "*.example.com" wildcards.
	AllowHosts []string `json:"allow_hosts"`
	// MaxBytes caps a response body (default 1 MiB).
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// Timeout bounds one fetch (default 10s).
	Timeout Duration `json:"timeout,omitempty"`
	// AllowPrivate permits loopback and private addresses (tests, labs).
	AllowPrivate bool `json:"allow_private,omitempty"`
}

// Federation configures remote agents.
type Federation struct {
	// AllowPrivate permits peers on loopback, private and link-local
	// addresses, which are otherwise refused (the demo's relay talks to
	// the server itself).
	AllowPrivate bool `json:"allow_private,omitempty"`
	// Timeout bounds connecting to a peer, its card and its unary calls
	// (default 10s).
	Timeout Duration `json:"timeout,omitempty"`
}

// PeerAuth says where a remote agent's credentials come from: a bearer
// token or an API key, each read from the named environment variable.
type PeerAuth struct {
	BearerEnv string `json:"bearer_env,omitempty"`
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Header carries the API key (default X-API-Key).
	Header string `json:"header,omitempty"`
}

// Provider is a model provider.
type Provider struct {
	// Type is "scripted" or "openai".
	Type string `json:"type"`
	// Rules are the scripted provider's rules.
	Rules []scripted.Rule `json:"rules,omitempty"`
	// BaseURL is the OpenAI-compatible endpoint (OPENAI_BASE_URL overrides
	// it; default https://api.openai.com/v1).
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the API key
	// (default OPENAI_API_KEY).
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// Model is the default model (OPENAI_MODEL overrides it).
	Model string `json:"model,omitempty"`
	// Timeout bounds a silent stream (idle timeout, default 60s).
	Timeout Duration `json:"timeout,omitempty"`
	// MaxRetries bounds retries on 429/5xx (default 3).
	MaxRetries int `json:"max_retries,omitempty"`
	// Models holds per-model settings, by model name (context.go).
	Models map[string]ContextSettings `json:"models,omitempty"`
}

// Agent declares one hosted agent.
type Agent struct {
	ID          string        `json:"id"`
	Name        string        `json:"name,omitempty"`
	Description string        `json:"description,omitempty"`
	Version     string        `json:"version,omitempty"`
	Skills      []agent.Skill `json:"skills,omitempty"`
	// Engine is "loop" (the LLM tool loop), "flow" (a Trellis flow),
	// "graph" (a workflow), "goal" (a workflow a model plans), "remote" (a
	// peer A2A agent) or "conformance"
	// (the A2A conformance behaviours).
	Engine string `json:"engine"`
	// Peer is the remote engine's peer: the URL of its agent card, or a
	// path ("/agents/echo/.well-known/agent-card.json") on this server.
	Peer string `json:"peer,omitempty"`
	// Auth is the remote engine's credentials for the peer.
	Auth *PeerAuth `json:"auth,omitempty"`
	// Flow is the flow engine's flow: a directory of node files or one
	// YAML file, relative to the configuration file.
	Flow string `json:"flow,omitempty"`
	// Workflow is the graph engine's workflow (zenflow spec v1): the path
	// of a YAML or JSON file, relative to the configuration file, or the
	// workflow itself, inline.
	Workflow json.RawMessage `json:"workflow,omitempty"`
	// Goal is the goal engine's settings: the agents its plans may use
	// and whether a person approves each plan (goal.go).
	Goal *GoalSettings `json:"goal,omitempty"`
	// SharedMemory gives the steps of a graph agent's workflow the
	// shared_memory_read and shared_memory_write tools (workflowteam.go).
	SharedMemory bool `json:"shared_memory,omitempty"`
	// Messaging gives them send_message; Coordinator runs a coordinator
	// agent beside them (it implies Messaging); MailboxSize bounds each
	// mailbox (workflowteam.go).
	Messaging   bool                 `json:"messaging,omitempty"`
	Coordinator *WorkflowCoordinator `json:"coordinator,omitempty"`
	MailboxSize int                  `json:"mailbox_size,omitempty"`
	// Provider names an entry of providers (loop engine). "auto-openai"
	// style switching is expressed with fallback_provider.
	Provider string `json:"provider,omitempty"`
	// OpenAIProvider, when set, is used instead of Provider whenever
	// OPENAI_BASE_URL or OPENAI_API_KEY is set in the environment.
	OpenAIProvider string   `json:"openai_provider,omitempty"`
	Model          string   `json:"model,omitempty"`
	SystemPrompt   string   `json:"system_prompt,omitempty"`
	Tools          []string `json:"tools,omitempty"`
	// DisallowedTools are never offered nor run (loop engine).
	DisallowedTools []string `json:"disallowed_tools,omitempty"`
	MaxIterations   int      `json:"max_iterations,omitempty"`
	// Temperature, TopP and MaxTokens tune each model turn (loop engine);
	// unset means the provider's defaults.
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	// Timeout bounds one attempt of a run (wall time); a run that passes it
	// fails with class timeout. TurnTimeout bounds one model turn (loop).
	Timeout     Duration `json:"timeout,omitempty"`
	TurnTimeout Duration `json:"turn_timeout,omitempty"`
	// ResponseSchema, a JSON Schema, makes the final answer structured
	// output: it must match, an answer that does not is sent back to the
	// model up to ResponseRetries times (default 2), and the valid JSON is
	// the run's result (loop engine).
	ResponseSchema  json.RawMessage `json:"response_schema,omitempty"`
	ResponseRetries int             `json:"response_retries,omitempty"`
	// ResponseStrict asks the provider to enforce the schema exactly
	// (OpenAI strict structured outputs).
	ResponseStrict bool `json:"response_strict,omitempty"`
	// ToolChoice is "auto", "none", "required" or one of the agent's tools
	// (loop engine); a request may set its own (message metadata
	// tool_choice, the REST body's tool_choice).
	ToolChoice string `json:"tool_choice,omitempty"`
	// OnLength is what an answer cut at max_tokens leads to: "continue"
	// (default: the model goes on, at most max_continuations times,
	// default 1), "compact" (the history is summarised and the turn asked
	// again, once) or "fail" (class model_output) (loop engine).
	OnLength         string `json:"on_length,omitempty"`
	MaxContinuations int    `json:"max_continuations,omitempty"`
	// Multitask is reject (default), enqueue or interrupt.
	Multitask    string `json:"multitask,omitempty"`
	HistoryLimit int    `json:"history_limit,omitempty"`
	Budget       Budget `json:"budget,omitempty"`
	// PeerTools are peer A2A agents the agent calls as tools, and
	// Handoffs the agents (ids of this file, or peer card URLs, or
	// {card, auth} for a peer that wants credentials) its model may hand
	// the conversation to (loop engine, federation.go).
	PeerTools []PeerTool      `json:"peer_tools,omitempty"`
	Handoffs  []HandoffTarget `json:"handoffs,omitempty"`
	// ToolSettings tune the agent's tools by name (loop engine):
	// approval: required makes every call wait for a human (guard.go).
	ToolSettings map[string]ToolSettings `json:"tool_settings,omitempty"`
	// ApprovalTimeout rejects a call still waiting for approval this long
	// after it was proposed; unset waits until answered (loop engine).
	ApprovalTimeout Duration `json:"approval_timeout,omitempty"`
	// InDoubt is the policy for the agent's tool calls found in doubt after
	// a crash, by tool name or "*" (effects.go): retry, reconcile, ask or
	// fail.
	InDoubt map[string]string `json:"in_doubt,omitempty"`
	// Governance is the agent's tool-call policy (loop engine, guard.go).
	Governance *Governance `json:"governance,omitempty"`
	// Revise is the agent's revise loop: a judge model decides whether
	// each answer is acceptable (revise.go).
	Revise *Revise `json:"revise,omitempty"`
	// MCPServers are Model Context Protocol servers whose tools the agent
	// may call, as "<name>__<tool>" (loop engine, mcp.go).
	MCPServers []MCPServer `json:"mcp_servers,omitempty"`
	// Memory scopes the agent's memory tools to a namespace (loop engine,
	// memory.go).
	Memory *AgentMemory `json:"memory,omitempty"`
	// ContextSettings (context_window, compact_threshold) override the
	// model's (loop engine, context.go).
	ContextSettings
}

// Budget limits an agent's token use.
type Budget struct {
	MaxTokensPerRun int64 `json:"max_tokens_per_run,omitempty"`
	MaxTokensTotal  int64 `json:"max_tokens_total,omitempty"`
	// MaxCostPerRun bounds what one run's whole call tree may cost, in the
	// prices' currency (the prices section must price its models).
	MaxCostPerRun float64 `json:"max_cost_per_run,omitempty"`
	// ChildShare is the part (0 < f ≤ 1, default 1) of what a run has left
	// of these budgets that one child run (a workflow step, a hand-off, a
	// peer or agent called as a tool) may spend; a child that passes its
	// share fails alone and its parent decides.
	ChildShare float64 `json:"child_share,omitempty"`
	// Input and output tokens of one run, apart.
	MaxInputTokensPerRun  int64 `json:"max_input_tokens_per_run,omitempty"`
	MaxOutputTokensPerRun int64 `json:"max_output_tokens_per_run,omitempty"`
	// MaxToolCallsPerRun bounds a loop run's tool calls.
	MaxToolCallsPerRun int `json:"max_tool_calls_per_run,omitempty"`
	// MaxWallTime bounds an attempt's wall time, as a budget.
	MaxWallTime Duration `json:"max_wall_time,omitempty"`
	// MaxTokensPerPeriod bounds the tokens the agent's runs use in each
	// Period (e.g. "24h": a day, from midnight UTC), per tenant, counted
	// in the store: durable and shared by replicas, unlike
	// max_tokens_total (this process's count since it started).
	MaxTokensPerPeriod int64    `json:"max_tokens_per_period,omitempty"`
	Period             Duration `json:"period,omitempty"`
}

// Duration is a time.Duration written as a Go duration string ("15s").
type Duration time.Duration

// UnmarshalJSON parses "15s", "250ms", …
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"15s\", got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil || v < 0 {
		return fmt.Errorf("invalid duration %q (want e.g. \"15s\" or \"500ms\")", s)
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as a string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return []byte(`"` + time.Duration(d).String() + `"`), nil
}

// Or returns d, or def when d is zero.
func (d Duration) Or(def time.Duration) time.Duration {
	if d == 0 {
		return def
	}
	return time.Duration(d)
}

// Load reads and validates a configuration file. An empty path loads the
// embedded demo configuration.
func Load(path string) (*Config, error) {
	if path == "" {
		return parse(demoYAML, "demo configuration", files{fs: demoFiles})
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, errdefs.Validationf("read config: %w", err)
	}
	return parse(b, path, files{base: filepath.Dir(path)})
}

// Parse decodes YAML strictly — unknown and duplicate keys are errors naming
// their path — and validates references. name labels errors; relative
// paths in the file (flow:) are resolved against the working directory.
func Parse(b []byte, name string) (*Config, error) {
	return parse(b, name, files{base: "."})
}

// parse is Parse with relative paths resolved in dir.
func parse(b []byte, name string, dir files) (*Config, error) {
	j, err := yaml.YAMLToJSONStrict(b)
	if err != nil {
		return nil, errdefs.Validationf("%s: not valid YAML: %v", name, err)
	}
	var c Config
	if err := strictjson.Decode(j, &c); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	if err := c.Validate(); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	if err := c.loadFlows(dir); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	if err := c.loadWorkflows(dir); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	if err := c.checkCallCycles(); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	if err := c.checkWorkflowTools(); err != nil {
		return nil, errdefs.Validationf("%s: %v", name, err)
	}
	return &c, nil
}
