package api

// These tests keep openapi.yaml honest: its paths are the router's routes,
// its references resolve, its examples satisfy its schemas, and the JSON the
// handlers and the runtime actually produce satisfies the schemas that
// describe it. A change to a route or a wire shape fails here until the
// document follows.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"sigs.k8s.io/yaml"

	"agentd/internal/agent"
	"agentd/internal/agui"
	"agentd/internal/errdefs"
	"agentd/internal/model"
	"agentd/internal/run"
	"agentd/internal/runtime"
)

// specFile is openapi.yaml relative to this package's directory (go test
// runs in it).
const specFile = "../../openapi.yaml"

// specURL names the document inside the schema compiler; nothing is loaded
// from it.
const specURL = "file:///agentd/openapi.json"

// httpMethods are the operation keys of an OpenAPI path item.
var httpMethods = []string{"get", "put", "post", "delete", "options", "head", "patch", "trace"}

// loadSpec parses openapi.yaml into generic JSON values (numbers as
// json.Number, as the schema compiler wants them).
func loadSpec(t testing.TB) map[string]any {
	t.Helper()
	raw, err := os.ReadFile(specFile)
	if err != nil {
		t.Fatalf("read %s: %v", specFile, err)
	}
	js, err := yaml.YAMLToJSON(raw)
	if err != nil {
		t.Fatalf("parse %s: %v", specFile, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		t.Fatalf("decode %s: %v", specFile, err)
	}
	doc, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("%s: top level is %T, want a mapping", specFile, v)
	}
	return doc
}

// asMap returns v as a mapping (nil when it is not one).
func asMap(v any) map[string]any {
	m, _ := v.(map[string]any)
	return m
}

// obj returns v[key] as a mapping (nil when absent or not a mapping).
func obj(v any, key string) map[string]any { return asMap(asMap(v)[key]) }

// pointer builds a JSON pointer from unescaped tokens.
func pointer(tokens ...string) string {
	r := strings.NewReplacer("~", "~0", "/", "~1")
	var b strings.Builder
	b.WriteByte('#')
	for _, tok := range tokens {
		b.WriteByte('/')
		b.WriteString(r.Replace(tok))
	}
	return b.String()
}

// resolve follows a local reference ("#/components/…") in doc.
func resolve(doc map[string]any, ref string) (any, error) {
	if !strings.HasPrefix(ref, "#/") {
		return nil, fmt.Errorf("reference %q is not local to the document", ref)
	}
	r := strings.NewReplacer("~1", "/", "~0", "~")
	var cur any = doc
	for _, tok := range strings.Split(ref[2:], "/") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, fmt.Errorf("reference %q: %q is not inside a mapping", ref, tok)
		}
		if cur, ok = m[r.Replace(tok)]; !ok {
			return nil, fmt.Errorf("reference %q: no member %q", ref, r.Replace(tok))
		}
	}
	return cur, nil
}

// deref resolves v when it is a reference object, once.
func deref(t *testing.T, doc map[string]any, v any) map[string]any {
	t.Helper()
	m, _ := v.(map[string]any)
	if ref, ok := m["$ref"].(string); ok {
		target, err := resolve(doc, ref)
		if err != nil {
			t.Fatal(err)
		}
		m, _ = target.(map[string]any)
	}
	return m
}

// operation is one method of one path in the document.
type operation struct {
	method, path string
	pathItem     map[string]any
	op           map[string]any
}

func operations(doc map[string]any) []operation {
	var ops []operation
	for path, item := range obj(doc, "paths") {
		pi, _ := item.(map[string]any)
		for _, m := range httpMethods {
			if op, ok := pi[m].(map[string]any); ok {
				ops = append(ops, operation{method: strings.ToUpper(m), path: path, pathItem: pi, op: op})
			}
		}
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.path+a.method, b.path+b.method) })
	return ops
}

func TestOpenAPIDocument(t *testing.T) {
	doc := loadSpec(t)
	if v, _ := doc["openapi"].(string); !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(v) {
		t.Errorf("openapi = %q, want 3.1.x", v)
	}
	info := obj(doc, "info")
	if info["title"] != "agentd" || info["version"] == nil {
		t.Errorf("info title/version = %v/%v, want agentd and a version", info["title"], info["version"])
	}
	desc, _ := info["description"].(string)
	for _, want := range []string{"?stream=true", "?wait=false", "text/event-stream", "Last-Event-ID", "run.end"} {
		if !strings.Contains(desc, want) {
			t.Errorf("info.description does not explain %q", want)
		}
	}
	servers, _ := doc["servers"].([]any)
	if len(servers) == 0 || asMap(servers[0])["url"] != "http://127.0.0.1:8080" {
		t.Errorf("servers = %v, want http://127.0.0.1:8080 first", servers)
	}
}

// TestOpenAPIRoutesMatchRouter compares the document's operations with the
// routes Mount declares, in both directions. HEAD is documented once, in
// info.description, for every GET: the router must serve it there and only
// there.
func TestOpenAPIRoutesMatchRouter(t *testing.T) {
	r := chi.NewRouter()
	(&Server{}).Mount(r)                   // Mount only declares routes; no runtime needed
	agui.New(nil, agui.Options{}).Mount(r) // the UI protocols, mounted beside
	var routes []string
	err := chi.Walk(r, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		routes = append(routes, method+" "+route)
		return nil
	})
	if err != nil {
		t.Fatalf("walk router: %v", err)
	}
	doc := loadSpec(t)
	if desc, _ := obj(doc, "info")["description"].(string); !strings.Contains(desc, "Every `GET` also answers `HEAD`") {
		t.Error("info.description does not say that every GET also answers HEAD")
	}
	var documented []string
	for _, op := range operations(doc) {
		documented = append(documented, op.method+" "+op.path)
		if op.method == http.MethodGet {
			documented = append(documented, http.MethodHead+" "+op.path)
		}
	}
	for _, rt := range routes {
		if !slices.Contains(documented, rt) {
			t.Errorf("route %s is not in openapi.yaml", rt)
		}
	}
	for _, d := range documented {
		if !slices.Contains(routes, d) {
			t.Errorf("openapi.yaml documents %s, which the router does not serve", d)
		}
	}
	if len(routes) == 0 {
		t.Fatal("the router declares no routes")
	}
}

var templateParam = regexp.MustCompile(`\{([^}]+)\}`)

// TestOpenAPIOperations checks each operation: an operationId, responses,
// declared path parameters, problem-details errors and the Location header
// of message sends.
func TestOpenAPIOperations(t *testing.T) {
	doc := loadSpec(t)
	ids, sends := map[string]string{}, map[string]bool{}
	for _, o := range operations(doc) {
		name := o.method + " " + o.path
		id, _ := o.op["operationId"].(string)
		if id == "" {
			t.Errorf("%s: no operationId", name)
		} else if prev, dup := ids[id]; dup {
			t.Errorf("%s: operationId %q is also used by %s", name, id, prev)
		}
		ids[id] = name

		declared := map[string]bool{}
		for _, list := range []any{o.pathItem["parameters"], o.op["parameters"]} {
			ps, _ := list.([]any)
			for _, p := range ps {
				param := deref(t, doc, p)
				if param["in"] != "path" {
					continue
				}
				pn, _ := param["name"].(string)
				if param["required"] != true {
					t.Errorf("%s: path parameter %q is not required", name, pn)
				}
				if !strings.Contains(o.path, "{"+pn+"}") {
					t.Errorf("%s: path parameter %q is not in the URL template", name, pn)
				}
				declared[pn] = true
			}
		}
		for _, m := range templateParam.FindAllStringSubmatch(o.path, -1) {
			if !declared[m[1]] {
				t.Errorf("%s: path parameter {%s} is not declared", name, m[1])
			}
		}

		responses, _ := o.op["responses"].(map[string]any)
		if len(responses) == 0 {
			t.Errorf("%s: no responses", name)
		}
		if id == "sendMessage" || id == "sendInput" {
			sends[id] = true
			for _, code := range []string{"200", "202"} {
				if obj(obj(deref(t, doc, responses[code]), "headers"), "Location") == nil {
					t.Errorf("%s: response %s does not declare the Location header", name, code)
				}
			}
		}
		for code, resp := range responses {
			if (code != "default" && code < "400") || o.path == "/readyz" {
				continue // /readyz answers 503 with its JSON status, not a problem
			}
			content := obj(deref(t, doc, resp), "content")
			if _, ok := content["application/problem+json"]; !ok || len(content) != 1 {
				t.Errorf("%s: response %s is not application/problem+json only", name, code)
			}
		}
	}
	for _, id := range []string{"sendMessage", "sendInput"} {
		if !sends[id] {
			t.Errorf("operation %s is missing", id)
		}
	}
}

// TestOpenAPIRefsResolve walks the whole document: every $ref and every
// discriminator mapping points at something, and every component is used.
func TestOpenAPIRefsResolve(t *testing.T) {
	doc := loadSpec(t)
	used := map[string]bool{}
	check := func(at, ref string) {
		if _, err := resolve(doc, ref); err != nil {
			t.Errorf("at %s: %v", at, err)
		}
		used[ref] = true
	}
	var walk func(at string, v any)
	walk = func(at string, v any) {
		switch v := v.(type) {
		case map[string]any:
			if ref, ok := v["$ref"].(string); ok {
				check(at, ref)
			}
			for _, ref := range obj(v["discriminator"], "mapping") {
				s, _ := ref.(string)
				check(at+"/discriminator", s)
			}
			for k, e := range v {
				walk(at+"/"+k, e)
			}
		case []any:
			for i, e := range v {
				walk(fmt.Sprintf("%s/%d", at, i), e)
			}
		}
	}
	walk("#", doc)
	// Security schemes are named by security requirements, not $ref.
	for _, req := range doc["security"].([]any) {
		for name := range req.(map[string]any) {
			check("#/security", pointer("components", "securitySchemes", name))
		}
	}
	for kind, set := range obj(doc, "components") {
		for name := range set.(map[string]any) {
			if !used[pointer("components", kind, name)] {
				t.Errorf("components/%s/%s is never referenced", kind, name)
			}
		}
	}
}

// TestOpenAPIStableSchemas checks that the shapes other tools rely on
// (DESIGN.md §7) are described under their names.
func TestOpenAPIStableSchemas(t *testing.T) {
	schemas := obj(obj(loadSpec(t), "components"), "schemas")
	for _, name := range []string{
		"Message", "Part", "File", "ToolCall", "ToolResult", "Artifact", "TokenUsage", "TaskError",
		"RunView", "RunList", "AgentView", "AgentList", "Skill", "MessageList", "StoredMessage",
		"Problem", "SendBody", "RunEvent",
		"RunStartEvent", "StatusEvent", "DeltaEvent", "StepStartEvent", "StepCompleteEvent",
		"StepErrorEvent", "InputEvent", "ArtifactEvent", "ProgressEvent", "HandoffEvent", "GapEvent", "RunEndEvent",
	} {
		if schemas[name] == nil {
			t.Errorf("components/schemas/%s is missing", name)
		}
	}
	mapping := obj(obj(obj(schemas, "RunEvent"), "discriminator"), "mapping")
	for _, typ := range []string{
		runtime.EventRunStart, runtime.EventStatus, runtime.EventDelta, runtime.EventStepStart,
		runtime.EventStepComplete, runtime.EventStepError, runtime.EventInput, runtime.EventArtifact,
		runtime.EventProgress, runtime.EventHandoff, runtime.EventGap, runtime.EventRunEnd,
	} {
		if mapping[typ] == nil {
			t.Errorf("RunEvent does not map event type %q", typ)
		}
	}
}

// schemaSet compiles the document's schemas on demand.
type schemaSet struct {
	t *testing.T
	c *jsonschema.Compiler
}

func newSchemaSet(t *testing.T, doc map[string]any) *schemaSet {
	t.Helper()
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020) // OpenAPI 3.1's dialect
	c.AssertFormat()
	if err := c.AddResource(specURL, doc); err != nil {
		t.Fatalf("add openapi.yaml to the schema compiler: %v", err)
	}
	return &schemaSet{t: t, c: c}
}

// validate checks the JSON text b against the schema at ptr.
func (s *schemaSet) validate(ptr string, b []byte) error {
	s.t.Helper()
	sch, err := s.c.Compile(specURL + ptr)
	if err != nil {
		s.t.Fatalf("compile schema %s: %v", ptr, err)
	}
	v, err := jsonschema.UnmarshalJSON(bytes.NewReader(b))
	if err != nil {
		s.t.Fatalf("decode %s: %v", b, err)
	}
	return sch.Validate(v)
}

// TestOpenAPIExamplesMatchSchemas validates every media-type example
// against the media type's schema, and decodes the send examples the way
// the server does.
func TestOpenAPIExamplesMatchSchemas(t *testing.T) {
	doc := loadSpec(t)
	schemas := newSchemaSet(t, doc)
	n := 0
	checkContent := func(at []string, content map[string]any) {
		for mt, m := range content {
			media, _ := m.(map[string]any)
			if media["schema"] == nil {
				t.Errorf("%s %s: no schema", pointer(at...), mt)
				continue
			}
			examples := map[string]any{}
			if ex, ok := media["example"]; ok {
				examples["example"] = ex
			}
			for name, ex := range obj(media, "examples") {
				examples[name] = asMap(ex)["value"]
			}
			for name, ex := range examples {
				b, err := json.Marshal(ex)
				if err != nil {
					t.Fatal(err)
				}
				if err := schemas.validate(pointer(append(at, "content", mt, "schema")...), b); err != nil {
					t.Errorf("%s %s example %q does not match its schema: %v", pointer(at...), mt, name, err)
				}
				if slices.Contains(at, "requestBodies") {
					var body sendBody
					req := httptest.NewRequest(http.MethodPost, "/", bytes.NewReader(b))
					if err := decodeJSON(httptest.NewRecorder(), req, 1<<20, &body); err != nil {
						t.Errorf("request example %q is rejected by the server: %v", name, err)
					} else if msg, err := body.message(); err != nil {
						t.Errorf("request example %q is rejected by the server: %v", name, err)
					} else if field, err := runtime.CheckUserMessage(msg); err != nil {
						t.Errorf("request example %q is rejected by the server: %s: %v", name, field, err)
					}
				}
				n++
			}
		}
	}
	components := obj(doc, "components")
	for name, rb := range obj(components, "requestBodies") {
		checkContent([]string{"components", "requestBodies", name}, obj(rb, "content"))
	}
	for name, resp := range obj(components, "responses") {
		checkContent([]string{"components", "responses", name}, obj(resp, "content"))
	}
	for _, o := range operations(doc) {
		for code, resp := range obj(o.op, "responses") {
			checkContent([]string{"paths", o.path, strings.ToLower(o.method), "responses", code}, obj(resp, "content"))
		}
	}
	if n < 5 {
		t.Errorf("validated %d examples; the document should show more", n)
	}
}

// TestOpenAPISchemasReject checks that the schemas are not vacuous: they
// refuse what the server refuses or never produces.
func TestOpenAPISchemasReject(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	cases := []struct{ schema, body string }{
		{"SendBody", `{}`},
		{"SendBody", `{"text": "hi", "message": {"role": "user", "parts": [{"type": "text", "text": "hi"}]}}`},
		{"SendBody", `{"text": "hi", "unknown": 1}`},
		{"SendBody", `{"message": {"role": "user", "parts": [{"type": "video", "text": "hi"}]}}`},
		{"SendBody", `{"message": {"role": "robot", "parts": []}}`},
		{"SendBody", `{"message": {"role": "assistant", "parts": [{"type": "text", "text": "hi"}]}}`},
		{"SendBody", `{"message": {"parts": []}}`},
		{"SendBody", `{"text": ""}`},
		{"RunView", `{"id": "r1", "context_id": "c1", "agent_id": "a", "status": "done"}`},
		{"RunEvent", `{"run_id": "r1", "seq": 1, "type": "tick", "time": "2025-01-01T00:00:00Z"}`},
		{"RunEvent", `{"seq": 1, "type": "gap", "time": "2025-01-01T00:00:00Z", "pruned_through": 1}`},
		{"RunEvent", `{"run_id": "r1", "seq": 1, "type": "run.end", "time": "yesterday", "state": "completed", "usage": {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0}}`},
		{"File", `{"name": "x", "bytes": "AQID", "url": "https://example.com/x"}`},
		{"Problem", `{"title": "Not found", "status": 404}`},
	}
	for _, c := range cases {
		if err := schemas.validate(component(c.schema), []byte(c.body)); err == nil {
			t.Errorf("%s accepts %s", c.schema, c.body)
		}
	}
}

// component points at a schema of components/schemas.
func component(name string) string { return pointer("components", "schemas", name) }

// TestOpenAPIDescribesWireShapes validates what the Go types encode against
// the schemas that describe them.
func TestOpenAPIDescribesWireShapes(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	at := time.Date(2025, 1, 2, 3, 4, 5, 600, time.UTC)
	call := model.ToolCall{ID: "c1", Name: "search", Arguments: json.RawMessage(`{"q":"go"}`)}
	result := model.ToolResult{ToolCallID: "c1", Name: "search", Content: "found", IsError: true}
	data, err := model.DataPart(map[string]int{"n": 1})
	if err != nil {
		t.Fatal(err)
	}
	full := model.Message{
		ID: "m1", Role: model.RoleAssistant, Name: "echo", Metadata: map[string]any{"k": "v"}, CreatedAt: at,
		Parts: []model.Part{
			model.TextPart("hello"), data,
			model.FileBytesPart("a.bin", "application/octet-stream", []byte{1, 2, 3}),
			model.FileURLPart("b.txt", "text/plain", "https://example.com/b.txt"),
			model.ToolCallPart(call), model.ToolResultPart(result),
		},
	}
	hi := model.NewText(model.RoleUser, "hi")
	assistant := run.Assistant{ID: "a1", AgentID: "assistant", Version: 2, Name: "ada", Description: "answers as Ada",
		Context:  map[string]any{"system_prompt": "You are Ada.", "temperature": 0.2, "tools": []string{"clock"}},
		Metadata: map[string]any{"team": "red"}, CreatedAt: at, UpdatedAt: at, VersionCreatedAt: at}
	userFull := full
	userFull.Role, userFull.Parts = model.RoleUser, full.Parts[:4] // no tool parts from users
	artifact := model.Artifact{ID: "a1", Name: "answer", Parts: []model.Part{model.TextPart("42")}}
	usage := model.TokenUsage{InputTokens: 3, OutputTokens: 2, TotalTokens: 5}
	taskErr := &run.TaskError{Class: string(errdefs.ClassInternal), Message: "boom"}
	task := run.Task{ID: "r1", ContextID: "c1", AgentID: "echo", State: run.StateWorking, Attempt: 1, CreatedAt: at, UpdatedAt: at}
	failed := task
	failed.State, failed.StatusMessage, failed.Error = run.StateFailed, &full, taskErr
	failed.Artifacts, failed.Usage, failed.Metadata = []model.Artifact{artifact}, usage, map[string]any{"x": 1}
	fullView := viewOf(failed)
	cost := 0.25
	fullView.Cost, fullView.UnpricedModels = &cost, []string{"local-model"}
	fullView.Messages = []model.Message{hi, full}
	echo := agentView(&runtime.Agent{Agent: agent.Agent{ID: "echo", Card: agent.AgentCard{
		Name: "Echo", Description: "echoes",
		Skills: []agent.Skill{{ID: "s", Name: "Echo", Tags: []string{"t"}, Examples: []string{"hi"}, InputModes: []string{"text/plain"}}},
	}}})
	bare := agentView(&runtime.Agent{Agent: agent.Agent{ID: "bare"}})
	stored := []run.Message{{ContextID: "c1", TaskID: "r1", Position: 1, Message: hi}, {ContextID: "c1", Position: 2, Message: full}}

	cases := []struct {
		schema string
		value  any
	}{
		{"RunView", viewOf(task)},
		{"RunView", fullView},
		{"RunList", RunList{Runs: []RunView{viewOf(task), viewOf(failed)}, NextCursor: "x", Total: 2}},
		{"RunList", RunList{Runs: []RunView{}}},
		{"AgentView", echo},
		{"AgentList", AgentList{Agents: []AgentView{echo, bare}}},
		{"MessageList", MessageList{Messages: stored, NextAfter: 2}},
		{"Message", full},
		{"Artifact", artifact},
		{"SendBody", sendBody{Text: "hi", ContextID: "c1"}},
		{"SendBody", sendBody{Message: &userFull, Metadata: map[string]any{"a": true}}},
		{"SendBody", sendBody{Text: "hi", AssistantID: "a1"}},
		{"AssistantView", assistantView(assistant)},
		{"AssistantList", assistantList([]run.Assistant{assistant, {ID: "a2", AgentID: "echo", Version: 1, Name: "Echo"}}, 2)},
		{"AssistantCreateBody", assistantBody{AgentID: "assistant", Context: assistant.Context}},
	}
	for _, c := range cases {
		b, err := json.Marshal(c.value)
		if err != nil {
			t.Fatal(err)
		}
		if err := schemas.validate(component(c.schema), b); err != nil {
			t.Errorf("%s does not describe %s: %v", c.schema, b, err)
		}
	}

	events := []struct {
		typ, schema string
		body        any
	}{
		{runtime.EventRunStart, "RunStartEvent", runtime.RunStartData{ContextID: "c1", AgentID: "echo", Attempt: 2, Resumed: "input"}},
		{runtime.EventStatus, "StatusEvent", runtime.StatusData{State: run.StateSubmitted}},
		{runtime.EventStatus, "StatusEvent", runtime.StatusData{State: run.StateFailed, Message: &full, Error: taskErr}},
		{runtime.EventPlan, "PlanEvent", runtime.PlanData{Actor: "research", Plan: json.RawMessage(`{"workflow":"w","steps":[{"id":"a","kind":"agent"}]}`)}},
		{runtime.EventDelta, "DeltaEvent", runtime.DeltaData{Actor: "echo", Text: "hel"}},
		{runtime.EventDelta, "DeltaEvent", runtime.DeltaData{ToolCall: &call}},
		{runtime.EventDelta, "DeltaEvent", runtime.DeltaData{ToolResult: &result}},
		{runtime.EventStepStart, "StepStartEvent", runtime.StepData{Actor: "plan"}},
		{runtime.EventStepComplete, "StepCompleteEvent", runtime.StepData{Actor: "plan", Payload: json.RawMessage(`{"ok":true}`)}},
		{runtime.EventStepError, "StepErrorEvent", runtime.StepData{Actor: "plan", Payload: json.RawMessage(`"bad"`)}},
		{runtime.EventInput, "InputEvent", runtime.InputData{Prompt: hi, Schema: json.RawMessage(`{"type":"string"}`), Source: "ask"}},
		{runtime.EventArtifact, "ArtifactEvent", runtime.ArtifactData{Artifact: artifact, Append: true, LastChunk: true}},
		{runtime.EventProgress, "ProgressEvent", runtime.ProgressData{Tool: "ask_echo", CallID: "c1", Source: "http://peer/card", Text: "tok1 "}},
		{runtime.EventProgress, "ProgressEvent", runtime.ProgressData{Tool: "ask_echo", State: "input-required", Artifact: &artifact}},
		{runtime.EventHandoff, "HandoffEvent", runtime.HandoffData{From: "desk", To: "assistant", ToolCallID: "c2", Reason: "time"}},
		{runtime.EventGap, "GapEvent", runtime.GapData{PrunedThrough: 41}},
		{runtime.EventRunEnd, "RunEndEvent", runtime.RunEndData{State: run.StateCompleted, Usage: usage}},
		{runtime.EventRunEnd, "RunEndEvent", runtime.RunEndData{State: run.StateFailed, Error: taskErr}},
	}
	for i, ev := range events {
		b := eventData(t, "r1", int64(i+1), ev.typ, at, ev.body)
		for _, schema := range []string{ev.schema, "RunEvent"} {
			if err := schemas.validate(component(schema), b); err != nil {
				t.Errorf("%s does not describe %s: %v", schema, b, err)
			}
		}
	}
}

// eventData builds an event's data as clients receive it: the body's
// members with run_id, seq, type and time (as runtime frames them).
func eventData(t *testing.T, runID string, seq int64, typ string, at time.Time, body any) []byte {
	t.Helper()
	b, err := json.Marshal(body)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["run_id"], m["seq"], m["type"], m["time"] = runID, seq, typ, at.Format(time.RFC3339Nano)
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	return b
}

// TestOpenAPIDescribesHandlerOutput validates what handlers that need no
// runtime write: the health probes and problem details.
func TestOpenAPIDescribesHandlerOutput(t *testing.T) {
	schemas := newSchemaSet(t, loadSpec(t))
	down := New(nil, Options{Ready: func(context.Context) error { return errors.New("store down") }})
	check := func(name, schema, contentType string, serve http.HandlerFunc) {
		rec := httptest.NewRecorder()
		serve(rec, httptest.NewRequest(http.MethodGet, "/v1/runs/x", nil))
		if ct := rec.Header().Get("Content-Type"); ct != contentType {
			t.Errorf("%s: Content-Type = %q, want %q", name, ct, contentType)
		}
		if err := schemas.validate(component(schema), rec.Body.Bytes()); err != nil {
			t.Errorf("%s: %s does not describe %s: %v", name, schema, rec.Body.Bytes(), err)
		}
	}
	check("healthz", "Health", "application/json", down.healthz)
	check("readyz down", "Health", "application/json", down.readyz)
	check("readyz up", "Health", "application/json", New(nil, Options{}).readyz)
	check("no route", "Problem", "application/problem+json", NotFoundHandler)
	check("bad method", "Problem", "application/problem+json", MethodNotAllowedHandler)
	for _, err := range []error{
		errdefs.NotFoundf("run %q not found", "x"),
		fieldErr("limit", errdefs.Validationf("must be an integer")),
		errdefs.Validation(fmt.Errorf("request body too large: %w", &http.MaxBytesError{Limit: 1})),
		errdefs.Conflictf("task x is working"),
		errors.New("unclassified"),
	} {
		check(err.Error(), "Problem", "application/problem+json", func(w http.ResponseWriter, r *http.Request) { writeError(w, r, err) })
	}
}
