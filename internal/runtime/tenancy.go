package runtime

import (
	"agentd/internal/run"
)

// contextKey keys r.contexts. Context ids are the clients' choice, so two
// tenants may well use the same one ("session-1"): their runs must neither
// queue behind each other nor see each other's active task.
func contextKey(tenant, contextID string) string {
	if tenant == "" || tenant == run.DefaultTenant {
		return contextID
	}
	return tenant + "\x00" + contextID
}
