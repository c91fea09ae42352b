package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// readRSS returns the resident set of process pid in KiB (0 when pid is 0).
func readRSS(pid int) (int64, error) {
	if pid == 0 {
		return 0, nil
	}
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0, fmt.Errorf("-server-pid %d: %w", pid, err)
	}
	for line := range bytes.Lines(b) {
		rest, ok := bytes.CutPrefix(line, []byte("VmRSS:"))
		if !ok {
			continue
		}
		f := strings.Fields(string(rest))
		if len(f) < 1 {
			break
		}
		return strconv.ParseInt(f[0], 10, 64)
	}
	return 0, errors.New("-server-pid: no VmRSS in /proc status")
}

// userHZ is the unit of the CPU times in /proc/<pid>/stat: USER_HZ, 100 on
// every Linux architecture Go builds for except alpha.
const userHZ = 100

// readCPU returns the CPU time (user + system, all threads) process pid has
// used so far, to a resolution of 1/userHZ s.
func readCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, fmt.Errorf("-server-pid %d: %w", pid, err)
	}
	cpu, err := parseCPU(b)
	if err != nil {
		return 0, fmt.Errorf("-server-pid %d: %w", pid, err)
	}
	return cpu, nil
}

// parseCPU reads utime + stime off a /proc/<pid>/stat line.
func parseCPU(b []byte) (time.Duration, error) {
	// The command name (field 2) may hold spaces and parentheses: the
	// fields that follow start after its last ')'. utime and stime are
	// fields 14 and 15 of the line, 12 and 13 after the name.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, errors.New("/proc stat without a command name")
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, fmt.Errorf("/proc stat has %d fields after the command name, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("CPU time %q in /proc stat: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
