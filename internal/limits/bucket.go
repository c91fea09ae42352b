package limits

import (
	"math"
	"sync"
	"time"
)

// buckets holds one token bucket per tenant: rate tokens a second, at
// most burst saved up.
type buckets struct {
	rate  float64
	burst float64
	now   func() time.Time

	mu sync.Mutex
	m  map[string]*bucket
}

type bucket struct {
	tokens float64
	last   time.Time
}

// maxIdleBuckets bounds the map before full (idle) buckets are dropped:
// a full bucket is what a new one would be.
const maxIdleBuckets = 10000

// take spends a token of tenant's bucket; when there is none it reports
// how long until there is.
func (b *buckets) take(tenant string) (bool, time.Duration) {
	now := b.now()
	b.mu.Lock()
	defer b.mu.Unlock()
	k := b.m[tenant]
	if k == nil {
		if len(b.m) >= maxIdleBuckets {
			b.sweep(now)
		}
		k = &bucket{tokens: b.burst, last: now}
		b.m[tenant] = k
	}
	k.tokens = math.Min(b.burst, k.tokens+now.Sub(k.last).Seconds()*b.rate)
	k.last = now
	if k.tokens >= 1 {
		k.tokens--
		return true, 0
	}
	return false, time.Duration((1 - k.tokens) / b.rate * float64(time.Second))
}

func (b *buckets) sweep(now time.Time) {
	for t, k := range b.m {
		if k.tokens+now.Sub(k.last).Seconds()*b.rate >= b.burst {
			delete(b.m, t)
		}
	}
}
