package tool_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"agentd/internal/errdefs"
	"agentd/internal/tool"
)

func TestClock(t *testing.T) {
	// 2024-02-29 23:30 UTC is already Friday, March 1 in Tokyo.
	fixed := time.Date(2024, 2, 29, 23, 30, 0, 0, time.UTC)
	var reg tool.Registry
	if err := tool.RegisterBuiltins(&reg, tool.BuiltinOptions{Now: func() time.Time { return fixed }}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		args    string
		content string
		zone    string
		weekday string
	}{
		{``, "Thursday, 2024-02-29T23:30:00Z (UTC)", "UTC", "Thursday"},
		{`{}`, "Thursday, 2024-02-29T23:30:00Z (UTC)", "UTC", "Thursday"},
		{`{"timezone":"UTC"}`, "Thursday, 2024-02-29T23:30:00Z (UTC)", "UTC", "Thursday"},
		{`{"timezone":"Asia/Tokyo"}`, "Friday, 2024-03-01T08:30:00+09:00 (Asia/Tokyo)", "Asia/Tokyo", "Friday"},
		{`{"timezone":"America/New_York"}`, "Thursday, 2024-02-29T18:30:00-05:00 (America/New_York)", "America/New_York", "Thursday"},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := reg.Execute(context.Background(), tool.Call{Name: tool.ClockName, Arguments: json.RawMessage(tt.args)})
			if res.IsError || res.Content != tt.content {
				t.Fatalf("result = %+v, want %q", res, tt.content)
			}
			var data struct {
				Time, Weekday, Timezone string
				Unix                    int64
			}
			if err := json.Unmarshal(res.Data, &data); err != nil {
				t.Fatal(err)
			}
			if data.Timezone != tt.zone || data.Weekday != tt.weekday || data.Unix != fixed.Unix() {
				t.Errorf("data = %+v", data)
			}
			if got, err := time.Parse(time.RFC3339, data.Time); err != nil || !got.Equal(fixed) {
				t.Errorf("time %q = %v, %v; want the injected instant", data.Time, got, err)
			}
		})
	}
}

func TestClockRejects(t *testing.T) {
	reg := builtins(t)
	tests := []struct {
		args string
		want string
	}{
		{`{"timezone":"Mars/Olympus_Mons"}`, `clock: unknown time zone "Mars/Olympus_Mons" (want an IANA name such as "Europe/Paris", or "UTC")`},
		{`{"timezone":"Local"}`, `clock: unknown time zone "Local" (want an IANA name such as "Europe/Paris", or "UTC")`},
		{`{"timezone":"../../etc/passwd"}`, `clock: unknown time zone "../../etc/passwd" (want an IANA name such as "Europe/Paris", or "UTC")`},
		{`{"timezone":5}`, `clock: argument /timezone: got number, want string`},
		{`{"tz":"UTC"}`, `clock: argument /tz: property not allowed`},
	}
	for _, tt := range tests {
		t.Run(tt.args, func(t *testing.T) {
			res := reg.Execute(context.Background(), tool.Call{Name: tool.ClockName, Arguments: json.RawMessage(tt.args)})
			if !res.IsError || res.Content != tt.want || !errdefs.IsValidation(res.Err) {
				t.Fatalf("result = %+v, want %q", res, tt.want)
			}
		})
	}
}
