package main

import (
	"bytes"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// scrubEnviron removes name=value from what /proc/<pid>/environ shows of
// this process. os.Unsetenv is not enough: it changes Go's copy of the
// environment, while /proc reads the block the kernel put on the initial
// stack at exec (between env_start and env_end of /proc/self/stat), where
// the value stays for the life of the process. The value's bytes are
// overwritten there with NULs through /proc/self/mem; nothing in Go reads
// that block after the runtime copied it at start.
func scrubEnviron(name string) error {
	block, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("read /proc/self/environ: %w", err)
	}
	start, err := envStart()
	if err != nil {
		return err
	}
	prefix := []byte(name + "=")
	mem, err := os.OpenFile("/proc/self/mem", os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("open /proc/self/mem: %w", err)
	}
	defer mem.Close()
	off := 0
	for _, entry := range bytes.Split(block, []byte{0}) {
		if bytes.HasPrefix(entry, prefix) && len(entry) > len(prefix) {
			at := start + int64(off+len(prefix))
			if _, err := mem.WriteAt(make([]byte, len(entry)-len(prefix)), at); err != nil {
				return fmt.Errorf("overwrite $%s in the environment block: %w", name, err)
			}
		}
		off += len(entry) + 1
	}
	// Check: what /proc shows now.
	after, err := os.ReadFile("/proc/self/environ")
	if err != nil {
		return fmt.Errorf("read /proc/self/environ: %w", err)
	}
	for _, entry := range bytes.Split(after, []byte{0}) {
		if bytes.HasPrefix(entry, prefix) && len(entry) > len(prefix) {
			return fmt.Errorf("$%s is still in /proc/self/environ after overwriting it", name)
		}
	}
	return nil
}

// envStart is the address of the environment block (field 50 of
// /proc/self/stat, Linux 3.5 or later).
func envStart() (int64, error) {
	stat, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		return 0, fmt.Errorf("read /proc/self/stat: %w", err)
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// count fields after its closing one.
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0, fmt.Errorf("/proc/self/stat: no command name")
	}
	fields := strings.Fields(string(stat[i+1:])) // fields 3...
	const envStartField = 50
	if len(fields) < envStartField-2 {
		return 0, fmt.Errorf("/proc/self/stat has %d fields; the kernel does not say where the environment is (Linux 3.5 or later needed)", len(fields)+2)
	}
	v, err := strconv.ParseUint(fields[envStartField-3], 10, 64)
	if err != nil || v == 0 {
		return 0, fmt.Errorf("/proc/self/stat: env_start %q", fields[envStartField-3])
	}
	return int64(v), nil
}
