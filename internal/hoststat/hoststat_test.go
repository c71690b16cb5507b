package hoststat

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func writeProc(t *testing.T, dir, name, text string) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// A CPU's share is that of the time between two reads; a read within the
// reuse interval answers the previous shares without reading.
func TestCPUSamplerSharesSincePreviousRead(t *testing.T) {
	dir := t.TempDir()
	writeProc(t, dir, "stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 100 0 100 800 0 0 0 0 0 0\nintr 1\nbtime 1\n")
	s := NewCPUSampler(dir, 0)
	first, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if first[0].Index != "ALL" || first[1].Index != "0" || first[0].Total != 20 {
		t.Errorf("since boot: %+v", first)
	}
	// 300 ticks more: 150 user, 30 system, 90 idle, 30 iowait.
	writeProc(t, dir, "stat", "cpu  250 0 130 890 30 0 0 0 0 0\ncpu0 250 0 130 890 30 0 0 0 0 0\n")
	got, err := s.Read()
	if err != nil {
		t.Fatal(err)
	}
	if got[0].Total != 60 || got[0].Columns[0] != 50 || got[0].Columns[colWait] != 10 {
		t.Errorf("since the previous read: %+v, want total 60, user 50, iowait 10", got[0])
	}

	reused := NewCPUSampler(dir, time.Hour)
	if _, err := reused.Read(); err != nil {
		t.Fatal(err)
	}
	writeProc(t, dir, "stat", "cpu  250 0 130 9999 30 0 0 0 0 0\n")
	got, err = reused.Read()
	if err != nil || got[0].Total != 29 { // (250+130)/1300, the first read's
		t.Errorf("within the reuse interval: %+v %v, want the previous share 29", got, err)
	}
}

func TestReadMemory(t *testing.T) {
	for _, tc := range []struct {
		name, meminfo string
		want          Memory
		err           bool
	}{
		{"kB", "MemTotal:       2000 kB\nMemFree:         100 kB\nMemAvailable:    500 kB\n", Memory{Total: 2048000, Available: 512000, Used: 1536000}, false},
		{"no total", "MemFree: 1 kB\n", Memory{}, true},
	} {
		dir := t.TempDir()
		writeProc(t, dir, "meminfo", tc.meminfo)
		got, err := ReadMemory(dir)
		if (err != nil) != tc.err || got != tc.want {
			t.Errorf("%s: %+v %v, want %+v (error %v)", tc.name, got, err, tc.want, tc.err)
		}
	}
	if _, err := ReadMemory(t.TempDir()); err == nil {
		t.Error("no meminfo: no error")
	}
}
