package pgtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
)

// sourceKind says where the test server comes from.
type sourceKind int

const (
	// fromURL: TEST_DATABASE_URL names a running server.
	fromURL sourceKind = iota
	// fromCluster: a throwaway cluster started from local binaries.
	fromCluster
	// fromNothing: no server can be had; tests skip (or fail under
	// REQUIRE_DB=1).
	fromNothing
)

// source is the decision of chooseSource.
type source struct {
	kind sourceKind
	// url is TEST_DATABASE_URL (fromURL).
	url string
	// binDir holds initdb and pg_ctl (fromCluster).
	binDir string
	// why explains fromNothing.
	why string
}

// clusterBinDirs are searched after PATH for initdb and pg_ctl, newest
// major version first (Debian's layout).
const clusterBinGlob = "/usr/lib/postgresql/*/bin"

// chooseSource decides where the server comes from: TEST_DATABASE_URL, else
// a directory holding both initdb and pg_ctl (PATH first, then
// clusterBinGlob), else nothing, with the reason.
func chooseSource(getenv func(string) string, lookPath func(string) (string, error), glob func(string) ([]string, error)) source {
	if u := getenv("TEST_DATABASE_URL"); u != "" {
		return source{kind: fromURL, url: u}
	}
	if p, err := lookPath("initdb"); err == nil {
		dir := filepath.Dir(p)
		if _, err := lookPath(filepath.Join(dir, "pg_ctl")); err == nil {
			return source{kind: fromCluster, binDir: dir}
		}
	}
	dirs, _ := glob(clusterBinGlob)
	slices.Sort(dirs)
	slices.Reverse(dirs)
	for _, dir := range dirs {
		_, err1 := lookPath(filepath.Join(dir, "initdb"))
		_, err2 := lookPath(filepath.Join(dir, "pg_ctl"))
		if err1 == nil && err2 == nil {
			return source{kind: fromCluster, binDir: dir}
		}
	}
	return source{kind: fromNothing, why: fmt.Sprintf(
		"TEST_DATABASE_URL is not set and no PostgreSQL binaries (initdb and pg_ctl) were found on PATH or in %s", clusterBinGlob)}
}

// systemSource is chooseSource on the real environment.
func systemSource() source {
	return chooseSource(os.Getenv, exec.LookPath, filepath.Glob)
}

// required reports whether database tests must not skip (REQUIRE_DB=1, as
// CI sets it).
func required(getenv func(string) string) bool {
	return getenv("REQUIRE_DB") == "1"
}

// BinDir finds the PostgreSQL binaries (initdb, pg_ctl) StartCluster
// needs, for commands that start a throwaway cluster outside tests.
func BinDir() (string, error) {
	src := chooseSource(func(string) string { return "" }, exec.LookPath, filepath.Glob)
	if src.kind != fromCluster {
		return "", errors.New(src.why)
	}
	return src.binDir, nil
}
