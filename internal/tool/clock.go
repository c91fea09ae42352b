package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	// The zone database is embedded so the clock answers the same in a
	// static container image without /usr/share/zoneinfo.
	_ "time/tzdata"

	"agentd/internal/errdefs"
)

// ClockName is the name the clock registers under.
const ClockName = "clock"

const clockSchema = `{
  "type": "object",
  "properties": {
    "timezone": {
      "type": "string",
      "description": "IANA time zone name such as \"Europe/Paris\" or \"America/New_York\". Default: UTC.",
      "maxLength": 64
    }
  },
  "additionalProperties": false
}`

// Clock returns the clock tool: the current time in RFC 3339 and the weekday,
// in UTC or a requested IANA zone. now is the time source (nil: time.Now),
// injectable so tests and replays are deterministic.
func Clock(now func() time.Time) Tool {
	if now == nil {
		now = time.Now
	}
	spec := Spec{
		Name:        ClockName,
		Description: "Get the current date, time and weekday, in UTC or in a given IANA time zone.",
		Parameters:  json.RawMessage(clockSchema),
		Flags:       Flags{ParallelSafe: true},
	}
	type args struct {
		Timezone string `json:"timezone"`
	}
	return Typed(spec, func(_ context.Context, a args) (Result, error) {
		loc, err := loadZone(a.Timezone)
		if err != nil {
			return Result{}, err
		}
		t := now().In(loc)
		stamp := t.Format(time.RFC3339)
		data, err := json.Marshal(struct {
			Time     string `json:"time"`
			Weekday  string `json:"weekday"`
			Timezone string `json:"timezone"`
			Unix     int64  `json:"unix"`
		}{stamp, t.Weekday().String(), loc.String(), t.Unix()})
		if err != nil {
			return Result{}, fmt.Errorf("encode result: %w", err)
		}
		return Result{Content: fmt.Sprintf("%s, %s (%s)", t.Weekday(), stamp, loc), Data: data}, nil
	})
}

// loadZone resolves an IANA name; "Local" is refused because the server's
// own zone is neither meaningful to the model nor its business.
func loadZone(name string) (*time.Location, error) {
	if name == "" {
		return time.UTC, nil
	}
	if name != "Local" {
		if loc, err := time.LoadLocation(name); err == nil {
			return loc, nil
		}
	}
	return nil, errdefs.Validationf(`unknown time zone %q (want an IANA name such as "Europe/Paris", or "UTC")`, name)
}
