package engine_test

import (
	"testing"

	"agentd/internal/engine"
	"agentd/internal/event"
)

func TestSubjectBuilders(t *testing.T) {
	tests := []struct {
		got  event.Subject
		want string
	}{
		{engine.SubjectRunStart("r1"), "engine.run.r1.start"},
		{engine.SubjectRunEnd("r1"), "engine.run.r1.end"},
		{engine.SubjectRunStatus("r1"), "engine.run.r1.status"},
		{engine.SubjectRunInput("r1"), "engine.run.r1.input"},
		{engine.SubjectRunArtifact("r1"), "engine.run.r1.artifact"},
		{engine.SubjectStepStart("r1", "echo"), "engine.run.r1.step.echo.start"},
		{engine.SubjectStepComplete("r1", "echo.node.n1"), "engine.run.r1.step.echo_node_n1.complete"},
		{engine.SubjectStepError("r.1", "echo.iter2"), "engine.run.r_1.step.echo_iter2.error"},
		{engine.SubjectStreamDelta("r1", "a*b"), "engine.run.r1.stream.a_b.delta"},
		{engine.SubjectRunStart(""), "engine.run._.start"},
	}
	for _, tt := range tests {
		if string(tt.got) != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
		if err := tt.got.Valid(); err != nil {
			t.Errorf("%q is not a valid subject: %v", tt.got, err)
		}
	}
}

func TestSanitiseID(t *testing.T) {
	tests := map[string]string{
		"":                 "_",
		"plain-id_42":      "plain-id_42",
		"a.b":              "a_b",
		"a*b>c":            "a_b_c",
		"with space\tx":    "with_space_x",
		"0193e0a1-uuid7":   "0193e0a1-uuid7",
		"ünï.cødé":         "ünï_cødé",
		"bad\xff.\xe2\x80": "bad\ufffd_\ufffd\ufffd", // strings.Map replaces invalid bytes
		"ok\xff":           "ok\xff",                 // left alone when nothing is unsafe
		"\u2028\u00a0":     "\u2028\u00a0",           // only ASCII whitespace is unsafe
	}
	for in, want := range tests {
		if got := engine.SanitiseID(in); got != want {
			t.Errorf("SanitiseID(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestSubjectPredicates(t *testing.T) {
	tests := []struct {
		subject       event.Subject
		delta, runEnd bool
	}{
		{engine.SubjectStreamDelta("r", "a"), true, false},
		{engine.SubjectRunEnd("r"), false, true},
		{engine.SubjectRunStart("r"), false, false},
		{engine.SubjectStepComplete("r", "end"), false, false},
		{"other.run.r.stream.a.delta", false, false},
		{"engine.run.r.step.x.end", false, false},
	}
	for _, tt := range tests {
		if got := engine.IsStreamDelta(tt.subject); got != tt.delta {
			t.Errorf("IsStreamDelta(%q) = %v", tt.subject, got)
		}
		if got := engine.IsRunEnd(tt.subject); got != tt.runEnd {
			t.Errorf("IsRunEnd(%q) = %v", tt.subject, got)
		}
	}
}

func TestParseStepActor(t *testing.T) {
	tests := []struct{ actor, agent, node string }{
		{"echo", "echo", ""},
		{engine.NodeActor("planner", "fetch"), "planner", "fetch"},
		{engine.IterActor("loop", 3), "loop", ""},
		{"graph.node.n1.iter2", "graph", "n1"},
		{"agent.iterator", "agent.iterator", ""},
		{"a.iter2x", "a.iter2x", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		agent, node := engine.ParseStepActor(tt.actor)
		if agent != tt.agent || node != tt.node {
			t.Errorf("ParseStepActor(%q) = %q, %q; want %q, %q", tt.actor, agent, node, tt.agent, tt.node)
		}
	}
}
