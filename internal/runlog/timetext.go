package runlog

import (
	"sync/atomic"
	"time"
)

// An event's time is written as encoding/json writes a time.Time: in
// time.RFC3339Nano, here always in UTC. Events come many to the second
// (every run writes several within a millisecond), so the text up to the
// seconds is kept for the last second written, shared by every log, and
// only the fraction is written per event. FuzzFrame holds the result to
// encoding/json's, within a second and across seconds.

// secondText is the text of one second, "2006-01-02T15:04:05"; it is
// never changed once shared.
type secondText struct {
	unix int64
	text []byte
}

// lastSecond is the second most recently written.
var lastSecond atomic.Pointer[secondText]

// appendTime appends at, in UTC, in time.RFC3339Nano.
func appendTime(b []byte, at time.Time) []byte {
	at = at.UTC()
	s := lastSecond.Load()
	if s == nil || s.unix != at.Unix() {
		s = &secondText{unix: at.Unix(), text: at.AppendFormat(nil, "2006-01-02T15:04:05")}
		lastSecond.Store(s)
	}
	b = append(b, s.text...)
	return append(appendFraction(b, at.Nanosecond()), 'Z')
}

// appendFraction appends ns as RFC3339Nano's ".999999999" does: a dot and
// up to nine digits without trailing zeros, nothing for zero.
func appendFraction(b []byte, ns int) []byte {
	if ns == 0 {
		return b
	}
	var digits [10]byte
	digits[0] = '.'
	for i := 9; i >= 1; i-- {
		digits[i] = byte('0' + ns%10)
		ns /= 10
	}
	n := 10
	for digits[n-1] == '0' {
		n--
	}
	return append(b, digits[:n]...)
}
