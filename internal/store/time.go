package store

import "time"

// StoredTime is t as every store keeps a time: in UTC at microsecond
// precision (PostgreSQL's); the zero time stays zero. It is
// t.UTC().Truncate(time.Microsecond) without Truncate's general division
// and Add's overflow and monotonic-clock checks: a microsecond divides a
// second, so only t's nanoseconds change, and a time already stored keeps
// them. (UTC drops the monotonic reading, as Truncate does.)
func StoredTime(t time.Time) time.Time {
	if t.IsZero() {
		return time.Time{}
	}
	t = t.UTC()
	if ns := t.Nanosecond(); ns%int(time.Microsecond) != 0 {
		t = time.Unix(t.Unix(), int64(ns-ns%int(time.Microsecond))).UTC()
	}
	return t
}
