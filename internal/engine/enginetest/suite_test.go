package enginetest

import (
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// The reference engine passes the real suite.
func TestRunSuiteReferenceEngine(t *testing.T) {
	RunSuite(t, func(testing.TB) Case { return stepperCase(flawNone, 5*time.Second) })
}

// The suite catches each broken engine, in the sub-test that owns the
// broken rule, and reports nothing for the reference engine.
func TestRunSuiteCatchesBrokenEngines(t *testing.T) {
	tests := []struct {
		name    string
		flaw    flaw
		timeout time.Duration
		// want maps a suite sub-test to a fragment of its expected failure.
		want map[string]string
	}{
		{name: "reference", flaw: flawNone, timeout: 5 * time.Second},
		{name: "publishes an empty token", flaw: flawEmptyToken, timeout: 5 * time.Second, want: map[string]string{
			"Success":             "empty text",
			"ResumeOwnCheckpoint": "empty text",
		}},
		{name: "ignores interrupts", flaw: flawIgnoresInterrupt, timeout: 200 * time.Millisecond, want: map[string]string{
			"Interrupt": "did not return within",
		}},
		{name: "restarts silently on resume", flaw: flawRestartsOnResume, timeout: 5 * time.Second, want: map[string]string{
			"ResumeOwnCheckpoint": "ignored ResumeFrom.Board",
			"ResumeForeignExecID": "want a Validation error",
		}},
		{name: "restarts though it cannot resume", flaw: flawNoResumeRestarts, timeout: 5 * time.Second, want: map[string]string{
			"ResumeUnsupported": "want NotAvailable",
		}},
		{name: "mutates attributes", flaw: flawMutatesAttributes, timeout: 5 * time.Second, want: map[string]string{
			"Success": "mutated run.Attributes",
		}},
		{name: "mutates the resumed checkpoint", flaw: flawMutatesCheckpoint, timeout: 5 * time.Second, want: map[string]string{
			"ResumeOwnCheckpoint": "mutated *run.ResumeFrom",
		}},
		{name: "claims checkpoints it never writes", flaw: flawNoCheckpoint, timeout: 5 * time.Second, want: map[string]string{
			"Success":             "declares EmitsCheckpoint but wrote no checkpoint",
			"ResumeOwnCheckpoint": "wrote no checkpoint",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			harness := newCaptureT(t)
			runSuite(harness, func(testing.TB) Case { return stepperCase(tt.flaw, tt.timeout) })
			got := harness.log.all()
			for sub, msgs := range got {
				t.Logf("%s: %q", sub, msgs)
			}
			if len(tt.want) == 0 && len(got) > 0 {
				t.Fatalf("suite reported failures for a correct engine: %v", got)
			}
			for sub, fragment := range tt.want {
				msgs := harness.log.failures(sub)
				if !containsFragment(msgs, fragment) {
					t.Errorf("sub-test %s: want a failure containing %q, got %q (all: %v)", sub, fragment, msgs, got)
				}
			}
		})
	}
}

func containsFragment(msgs []string, fragment string) bool {
	for _, m := range msgs {
		if strings.Contains(m, fragment) {
			return true
		}
	}
	return false
}
