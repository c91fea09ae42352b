package event_test

import (
	"strings"
	"testing"

	"agentd/internal/errdefs"
	"agentd/internal/event"
)

func TestSubjectValid(t *testing.T) {
	cases := []struct {
		subject event.Subject
		wantErr string
	}{
		{"a", ""},
		{"engine.run.r1.stream.echo.delta", ""},
		{"", "empty"},
		{"a..b", "token 2 is empty"},
		{".a", "token 1 is empty"},
		{"a.", "token 2 is empty"},
		{"a.*", "contains a wildcard"},
		{"a.>", "contains a wildcard"},
		{"a.b*c", "contains a wildcard"},
	}
	for _, c := range cases {
		checkValidity(t, "Subject("+string(c.subject)+")", c.subject.Valid(), c.wantErr)
	}
}

func checkValidity(t *testing.T, what string, err error, wantErr string) {
	t.Helper()
	switch {
	case wantErr == "" && err != nil:
		t.Errorf("%s.Valid() = %v, want nil", what, err)
	case wantErr != "" && err == nil:
		t.Errorf("%s.Valid() = nil, want an error containing %q", what, wantErr)
	case wantErr != "" && !strings.Contains(err.Error(), wantErr):
		t.Errorf("%s.Valid() = %v, want it to contain %q", what, err, wantErr)
	case wantErr != "" && !errdefs.IsValidation(err):
		t.Errorf("%s.Valid() = %v, class %q, want validation", what, err, errdefs.ClassOf(err))
	}
}
