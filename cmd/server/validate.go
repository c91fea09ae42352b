package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"agentd/internal/config"
	"agentd/internal/engine/graph"
)

// validateCommand is `server validate FILE…`: it checks each file without
// starting a server and prints one line per problem, "FILE: path:
// message". It fails (exit status 1) when any file has a problem.
func validateCommand(args []string, stdout io.Writer) error {
	if len(args) == 0 {
		return fmt.Errorf("%w: validate needs at least one file (a workflow, a flow or a configuration)", errUsage)
	}
	bad := 0
	for _, path := range args {
		problems := validateFile(path)
		for _, p := range problems {
			fmt.Fprintf(stdout, "%s: %s\n", path, p)
		}
		if slices.ContainsFunc(problems, isError) {
			bad++
		}
	}
	if bad > 0 {
		return fmt.Errorf("validate: %d of %d file(s) have problems", bad, len(args))
	}
	return nil
}

// fileKind is one kind of file validate knows: claims recognises it (doc
// is the file's top-level mapping, nil for a directory or a file that is
// not one) and check lists its problems.
type fileKind struct {
	name   string
	claims func(path string, isDir bool, doc map[string]any) bool
	check  func(path string) []string
}

// fileKinds are tried in order; the first that claims a file checks it.
func fileKinds() []fileKind {
	return []fileKind{
		{name: "workflow", claims: isWorkflowFile, check: checkWorkflowFile},
		{name: "configuration", claims: isConfigFile, check: checkConfigFile},
		{name: "flow", claims: isFlow, check: checkFlow},
	}
}

// validateFile finds the file's kind and checks it.
func validateFile(path string) []string {
	fi, err := os.Stat(path)
	if err != nil {
		return []string{err.Error()}
	}
	var doc map[string]any
	if !fi.IsDir() {
		b, err := os.ReadFile(path)
		if err != nil {
			return []string{err.Error()}
		}
		_ = yaml.Unmarshal(b, &doc) // a file that is no mapping is claimed by no kind
	}
	for _, k := range fileKinds() {
		if k.claims(path, fi.IsDir(), doc) {
			return k.check(path)
		}
	}
	return []string{"not a workflow (a mapping with name and steps), a flow (a directory of node files, or a mapping with nodes) nor an agentd configuration (a mapping with agents)"}
}

func isWorkflowFile(_ string, isDir bool, doc map[string]any) bool {
	_, steps := doc["steps"]
	_, agents := doc["agents"].([]any)
	return !isDir && steps && !agents
}

func checkWorkflowFile(path string) []string {
	w, err := graph.Load(path)
	var lines []string
	var ps graph.Problems
	switch {
	case errors.As(err, &ps):
		for _, p := range ps {
			lines = append(lines, p.String())
		}
	case err != nil:
		lines = append(lines, err.Error())
	}
	if w != nil {
		for _, p := range w.Warnings() {
			lines = append(lines, "warning: "+p.String())
		}
	}
	return lines
}

func isConfigFile(_ string, isDir bool, doc map[string]any) bool {
	_, agents := doc["agents"].([]any)
	return !isDir && agents
}

func checkConfigFile(path string) []string {
	if _, err := config.Load(path); err != nil {
		// The loader names the file itself; the command does.
		return []string{strings.TrimPrefix(err.Error(), path+": ")}
	}
	return nil
}

// isError tells a problem from a warning, which is printed but does not
// fail the command.
func isError(problem string) bool { return !strings.HasPrefix(problem, "warning: ") }

// isFlow claims a directory (Trellis's layout, one node per file) and a
// mapping with nodes (the one-file layout).
func isFlow(_ string, isDir bool, doc map[string]any) bool {
	_, nodes := doc["nodes"].([]any)
	_, agents := doc["agents"]
	return isDir || nodes && !agents
}

// checkFlow compiles the flow against the tools agentd offers flows and
// lists its errors and warnings.
func checkFlow(path string) []string {
	_, problems, err := config.CheckFlow(path)
	if err != nil {
		return []string{err.Error()}
	}
	lines := make([]string, len(problems))
	for i, p := range problems {
		lines[i] = p.String()
	}
	return lines
}
