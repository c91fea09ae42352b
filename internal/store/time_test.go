package store_test

import (
	"testing"
	"time"

	"agentd/internal/store"
)

// TestStoredTime checks StoredTime against Truncate, which it replaces.
func TestStoredTime(t *testing.T) {
	zone := time.FixedZone("x", -7200)
	times := []time.Time{
		{}, time.Now(), time.Now().In(zone), time.Unix(0, 0), time.Unix(-1, 999_999_999),
		time.Unix(-62135596800, 1), time.Date(1, 1, 1, 0, 0, 0, 1500, time.UTC),
		time.Date(2026, 1, 2, 3, 4, 5, 123456789, zone), time.Date(2026, 1, 2, 3, 4, 5, 123456000, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, zone), time.Date(-50, 6, 1, 0, 0, 0, 7, time.UTC),
	}
	for _, in := range times {
		want := time.Time{}
		if !in.IsZero() {
			want = in.UTC().Truncate(time.Microsecond)
		}
		if got := store.StoredTime(in); got != want {
			t.Errorf("store.StoredTime(%v) = %v, want %v", in, got, want)
		}
	}
}
