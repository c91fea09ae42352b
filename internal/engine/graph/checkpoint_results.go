package graph

import "agentd/internal/engine"

// CheckpointResults returns the step results a checkpoint of the engine
// holds, by namespaced step id (see StepResult), and whether the workflow
// had finished when it was written. An engine that runs a workflow for
// someone else (engine/goal) reads the outcome of every step from it
// without knowing the payload's format.
func CheckpointResults(cp engine.Checkpoint) (results map[string]*StepResult, done bool, err error) {
	st, err := decodeState(cp.Payload)
	if err != nil {
		return nil, false, err
	}
	return st.Results, st.Done, nil
}
