// Package retention prunes what finished runs leave behind: every
// interval, the event logs and checkpoints of runs that finished more than
// the configured age ago, in batches of one store transaction each
// (store.Pruner), until none is left. A task keeps its final state and
// transcript; a stream that asks for its pruned events is told so by a gap
// event (DESIGN.md §4, invariant 3).
//
// Imports: store.
package retention
