package pgstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/storetest"
)

func TestAssistantsContract(t *testing.T) {
	storetest.RunAssistantsSuite(t, func(t *testing.T) store.Assistants { return open(t) })
}
