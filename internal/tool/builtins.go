package tool

import (
	"fmt"
	"time"
)

// BuiltinOptions configures the built-in tools. The zero value gives the
// calculator and the clock on time.Now.
type BuiltinOptions struct {
	// Now is the clock's time source; nil means time.Now.
	Now func() time.Time
	// HTTPGet enables the http_get tool with these options; nil leaves it
	// out, so no built-in reaches the network unless configured to.
	HTTPGet *HTTPGetOptions
}

// Builtins returns the built-in tools, sorted by name.
func Builtins(opts BuiltinOptions) []Tool {
	tools := []Tool{Calculator(), Clock(opts.Now)}
	if opts.HTTPGet != nil {
		tools = append(tools, HTTPGet(*opts.HTTPGet))
	}
	return tools
}

// RegisterBuiltins registers every built-in tool in r.
func RegisterBuiltins(r *Registry, opts BuiltinOptions) error {
	for _, t := range Builtins(opts) {
		if err := r.Register(t); err != nil {
			return fmt.Errorf("register built-in tools: %w", err)
		}
	}
	return nil
}
