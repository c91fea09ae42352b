// Package run is the vocabulary every layer of agentd speaks about runs:
// a Task (one run of one agent in one context, the A2A task) and its
// TaskState, the transcript's Message, the event log's Event, a task's
// PushConfig, the queries and pages that list them, and the tenant a
// request acts for (WithTenant, TenantFrom).
//
// It holds words, not behaviour: no interface, no goroutine, nothing
// persisted or served here. store declares how these are kept (Store,
// Change, leases), runtime how they change, the faces how they are shown;
// each imports run for the words alone, so that a face reads tasks and
// events without importing the storage package.
//
// Imports: model. Everything else in agentd may import it.
package run
