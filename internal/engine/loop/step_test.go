package loop

import (
	"strconv"
	"testing"
)

// TestIterationStep checks the precomputed Steps against the general
// spelling on both sides of the table's end.
func TestIterationStep(t *testing.T) {
	for n := -1; n <= 2*len(iterationSteps); n++ {
		if got, want := iterationStep(n), "iter:"+strconv.Itoa(n); got != want {
			t.Errorf("iterationStep(%d) = %q, want %q", n, got, want)
		}
	}
}
