package memstore_test

import (
	"testing"

	"agentd/internal/store"
	"agentd/internal/store/memstore"
	"agentd/internal/store/storetest"
)

func TestSchedulesContract(t *testing.T) {
	storetest.RunSchedulesSuite(t, func(t *testing.T) store.Schedules { return memstore.New() })
}
