//go:build !race

package model

// raceEnabled reports a -race build, whose instrumentation allocates.
const raceEnabled = false
