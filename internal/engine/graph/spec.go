package graph

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"time"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// Workflow is one zenflow spec v1 document (spec §2): named agents, a
// registry of sub-workflows, the steps of the DAG and execution options.
// Keys are camelCase, as the spec spells them; unknown keys are rejected.
type Workflow struct {
	Name        string            `json:"name"`
	Description string            `json:"description,omitempty"`
	Version     int               `json:"version,omitempty"`
	Agents      map[string]*Agent `json:"agents,omitempty"`
	Includes    map[string]string `json:"includes,omitempty"`
	Steps       []*Step           `json:"steps"`
	Options     Options           `json:"options,omitzero"`

	// dir is the directory file references resolve against ("" when the
	// document was parsed without one).
	dir string
	// warnings are what loading found that may fail a run but does not
	// make the document invalid (Warnings).
	warnings Problems
}

// Warnings lists what loading found that may still fail a run without
// making the document invalid: a context file missing when it was loaded.
func (w *Workflow) Warnings() Problems { return w.warnings }

// Agent is a named agent of a workflow (spec §3).
type Agent struct {
	Description     string          `json:"description"`
	Prompt          string          `json:"prompt,omitempty"`
	Model           string          `json:"model,omitempty"`
	Tools           []string        `json:"tools,omitempty"`
	DisallowedTools []string        `json:"disallowedTools,omitempty"`
	MaxTurns        int             `json:"maxTurns,omitempty"`
	Temperature     *float64        `json:"temperature,omitempty"`
	TopP            *float64        `json:"topP,omitempty"`
	ResultSchema    json.RawMessage `json:"resultSchema,omitempty"`

	// prompt is Prompt with an @ file reference resolved.
	prompt string
	// schema is ResultSchema compiled; nil without one.
	schema *jsonschema.Schema
}

// Step is one node of the DAG (spec §4). A step runs an agent on its
// instructions, a loop over inner steps or itself, or an included
// sub-workflow.
type Step struct {
	ID           string   `json:"id"`
	Agent        string   `json:"agent,omitempty"`
	Instructions string   `json:"instructions,omitempty"`
	DependsOn    []string `json:"dependsOn,omitempty"`
	ContextFiles []string `json:"contextFiles,omitempty"`
	Model        string   `json:"model,omitempty"`
	Timeout      Duration `json:"timeout,omitempty"`
	Retries      int      `json:"retries,omitempty"`
	MaxRetries   *int     `json:"maxRetries,omitempty"`
	Condition    *string  `json:"condition,omitempty"`
	Include      string   `json:"include,omitempty"`
	Loop         *Loop    `json:"loop,omitempty"`

	// cond is Condition compiled.
	cond expr
	// text is Instructions with an @ file reference resolved.
	text string
	// files are ContextFiles resolved against the workflow's directory.
	files []string
	// sub is the included workflow, loaded by Load.
	sub *Workflow
}

// Loop makes a step iterate (spec §6): repeat-until (MaxIterations with
// Until and/or UntilAgent) or forEach.
type Loop struct {
	MaxIterations  *int      `json:"maxIterations,omitempty"`
	Until          *string   `json:"until,omitempty"`
	UntilAgent     string    `json:"untilAgent,omitempty"`
	ForEach        *ForEach  `json:"forEach,omitempty"`
	MaxConcurrency int       `json:"maxConcurrency,omitempty"`
	Delay          *Duration `json:"delay,omitempty"`
	Steps          []*Step   `json:"steps,omitempty"`
	OutputMode     string    `json:"outputMode,omitempty"`

	// until and each are Until and a forEach expression compiled.
	until, each expr
}

// ForEach is what a forEach loop iterates over: a CEL expression returning
// a list, or a static list of JSON values.
type ForEach struct {
	Expr  string
	Items []any
	// static says Items came from a list literal (which may not be empty).
	static bool
}

// UnmarshalJSON accepts a string (CEL) or an array.
func (f *ForEach) UnmarshalJSON(b []byte) error {
	if err := json.Unmarshal(b, &f.Expr); err == nil {
		return nil
	}
	f.static = true
	return json.Unmarshal(b, &f.Items)
}

// MarshalJSON writes the expression or the list back.
func (f ForEach) MarshalJSON() ([]byte, error) {
	if f.static {
		return json.Marshal(f.Items)
	}
	return json.Marshal(f.Expr)
}

// Options are the workflow-wide execution knobs (spec §8).
type Options struct {
	MaxConcurrency int             `json:"maxConcurrency,omitempty"`
	OnStepFailure  FailureStrategy `json:"onStepFailure,omitempty"`
	Timeout        Duration        `json:"timeout,omitempty"`
	StepTimeout    Duration        `json:"stepTimeout,omitempty"`
	Isolation      string          `json:"isolation,omitempty"`
	Scheduler      Scheduler       `json:"scheduler,omitempty"`
	MaxRetries     *int            `json:"maxRetries,omitempty"`
}

// FailureStrategy says what a failed step does to the rest of the DAG.
type FailureStrategy string

// The failure strategies of spec §8.
const (
	FailureCascade        FailureStrategy = "cascade"
	FailureSkipDependents FailureStrategy = "skip-dependents"
	FailureAbort          FailureStrategy = "abort"
)

// Scheduler orders the ready steps when more are ready than may run.
type Scheduler string

// The schedulers of spec §8.
const (
	SchedulerDependencyFirst Scheduler = "dependency-first"
	SchedulerRoundRobin      Scheduler = "round-robin"
	SchedulerLeastBusy       Scheduler = "least-busy"
)

// Output modes of a repeat-until loop (spec §6).
const (
	OutputLast       = "last"
	OutputCumulative = "cumulative"
)

// The spec's hard caps (§11) and defaults.
const (
	MaxStepsPerWorkflow    = 100
	MaxDescriptionChars    = 2000
	MaxFileSizeBytes       = 1 << 20
	MaxAttachmentSizeBytes = 10 << 20
	MaxIncludeDepth        = 5
	DefaultMaxConcurrency  = 5
	DefaultMaxTurns        = 50
	celCostLimit           = 10000
)

// Duration is a spec duration: "1h30m", "45s", "0s" — hours, minutes and
// seconds only, in that order, no fractions (spec §10).
type Duration time.Duration

var durationPattern = regexp.MustCompile(`^(\d+h)?(\d+m)?(\d+s)?$`)

// ParseDuration parses the spec's duration format.
func ParseDuration(s string) (Duration, error) {
	if len(s) < 2 || !durationPattern.MatchString(s) {
		return 0, fmt.Errorf("invalid duration %q: want hours, minutes and seconds such as \"30m\", \"1h30m\" or \"45s\"", s)
	}
	var total time.Duration
	n := 0
	for _, c := range s {
		if c >= '0' && c <= '9' {
			if n > (1<<62)/10 {
				return 0, fmt.Errorf("invalid duration %q: too long", s)
			}
			n = n*10 + int(c-'0')
			continue
		}
		unit := map[rune]time.Duration{'h': time.Hour, 'm': time.Minute, 's': time.Second}[c]
		if time.Duration(n) > (1<<63-1)/unit || total > (1<<63-1)-time.Duration(n)*unit {
			return 0, fmt.Errorf("invalid duration %q: too long", s)
		}
		total += time.Duration(n) * unit
		n = 0
	}
	return Duration(total), nil
}

// UnmarshalJSON parses a duration string.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("want a duration string such as \"30m\", got %s", b)
	}
	v, err := ParseDuration(s)
	if err != nil {
		return err
	}
	*d = v
	return nil
}

// MarshalJSON writes the duration in the spec's format.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(d.String())
}

// String writes d as hours, minutes and seconds ("1h30m0s" → "1h30m").
func (d Duration) String() string {
	t := time.Duration(d)
	h, m, s := int64(t/time.Hour), int64(t%time.Hour/time.Minute), int64(t%time.Minute/time.Second)
	out := ""
	if h > 0 {
		out += strconv.FormatInt(h, 10) + "h"
	}
	if m > 0 {
		out += strconv.FormatInt(m, 10) + "m"
	}
	if s > 0 || out == "" {
		out += strconv.FormatInt(s, 10) + "s"
	}
	return out
}
