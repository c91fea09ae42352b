package main

import (
	"fmt"
	"os"
	"sync"
	"syscall"

	"agentd/internal/runtime"
)

// effectFaultEnv names the fault point at which this process kills itself
// with SIGKILL, for the exactly-once fault tests ONLY
// (cmd/server/effects_pg_test.go, cmd/chaos): "before-intent",
// "after-intent", "before-result" or "after-result" — either side of the
// durable commit of a tool call's intent or result. Never set it in
// production: the process dies at the first tool call with effects.
const effectFaultEnv = "AGENTD_TEST_EFFECT_FAULT"

func init() {
	point := os.Getenv(effectFaultEnv)
	if point == "" {
		return
	}
	var once sync.Once
	runtime.SetEffectFaultHook(func(at string) {
		if at != point {
			return
		}
		once.Do(func() {
			fmt.Fprintf(os.Stderr, "%s: killing this process at %s\n", effectFaultEnv, at)
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way: go no further
		})
	})
}
