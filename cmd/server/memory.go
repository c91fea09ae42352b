package main

import (
	"fmt"

	"agentd/internal/config"
	"agentd/internal/memory"
	"agentd/internal/store"
)

// newMemory returns the long-term memory over st, with the embeddings
// endpoint of the memory section, and the memory tools' view of it.
func newMemory(st store.Store, cfg *config.Config, getenv func(string) string) (*memory.Service, *memory.Tools, error) {
	ms, ok := st.(store.Memory)
	if !ok {
		return nil, nil, fmt.Errorf("the store %T keeps no memory items", st)
	}
	svc := memory.New(ms, cfg.MemoryOptions(getenv))
	return svc, memory.NewTools(svc), nil
}
