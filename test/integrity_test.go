package test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// dirFiles is every file of a data directory (but the socket) with its
// content.
func dirFiles(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Type()&os.ModeSocket != 0 {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		files[rel], err = os.ReadFile(p)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

func copyDir(t *testing.T, files map[string][]byte) string {
	t.Helper()
	dir := t.TempDir()
	for name, data := range files {
		os.MkdirAll(filepath.Dir(filepath.Join(dir, name)), 0o700)
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func names(files map[string][]byte) []string {
	var n []string
	for k := range files {
		n = append(n, k)
	}
	sort.Strings(n)
	return n
}

// swmgr refuses to start on a data directory that lost or
// damaged a part, says what is wrong and how to restore, and changes
// nothing in it; it never starts as a new switch over it.
func TestStartRefusesADamagedDataDirectory(t *testing.T) {
	src := t.TempDir()
	s := startServer(t, src)
	s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"192.0.2.41"}`)
	s.expect(t, 201, "POST", "/config/User", `{"Name":"integrity","Group":"operator","Password":"integrity-pass-1"}`)
	s.stop(t)
	good := dirFiles(t, src)
	for _, want := range []string{"swmgr.db", "secret.key", "accounts/passwd"} {
		if good[want] == nil {
			t.Fatalf("the data directory has no %s: %v", want, names(good))
		}
	}
	page := os.Getpagesize()
	for _, tc := range []struct {
		what   string
		damage func(files map[string][]byte)
		want   string
	}{
		{"empty database", func(f map[string][]byte) { f["swmgr.db"] = nil }, "is empty (0 bytes)"},
		{"truncated database", func(f map[string][]byte) { f["swmgr.db"] = f["swmgr.db"][:page+100] }, "is truncated"},
		{"database cut in half", func(f map[string][]byte) { f["swmgr.db"] = f["swmgr.db"][:len(f["swmgr.db"])/2] }, "is damaged"},
		{"newest meta page damaged", func(f map[string][]byte) {
			db := bytes.Clone(f["swmgr.db"])
			db[16+30] ^= 1
			db[page+16+30] ^= 1
			f["swmgr.db"] = db
		}, "meta page 0 is damaged"},
		{"database missing", func(f map[string][]byte) { delete(f, "swmgr.db") }, "swmgr.db is missing"},
		{"secret key missing", func(f map[string][]byte) { delete(f, "secret.key") }, "secret.key is missing"},
		{"secret key replaced", func(f map[string][]byte) { f["secret.key"] = bytes.Repeat([]byte{7}, 32) }, "is not the key of this database"},
		{"secret key short", func(f map[string][]byte) { f["secret.key"] = f["secret.key"][:16] }, "want a 32-byte key"},
		{"account files missing", func(f map[string][]byte) {
			for _, n := range []string{"passwd", "shadow", "group", "gshadow"} {
				delete(f, "accounts/"+n)
			}
		}, "accounts/passwd is missing"},
		{"account files garbage", func(f map[string][]byte) { f["accounts/passwd"] = []byte("\x7fELF garbage\n") }, "not an account entry"},
		// An object's record: the database file is whole, one record in
		// it is not what swmgr wrote. The start reads every record.
		{"an object's JSON damaged", func(f map[string][]byte) {
			f["swmgr.db"] = damageRecord(t, f["swmgr.db"], `"192.0.2.41"`, func(rec []byte) {
				for i := recordHeaderSize; i < len(rec); i++ {
					rec[i] = 0xff
				}
			})
		}, `the stored NtpServer "192.0.2.41" (ObjectId `},
		{"an object's record header damaged", func(f map[string][]byte) {
			f["swmgr.db"] = damageRecord(t, f["swmgr.db"], `"192.0.2.41"`, func(rec []byte) { rec[0] = 9 })
		}, `NtpServer "192.0.2.41" is damaged: bad header`},
	} {
		t.Run(tc.what, func(t *testing.T) {
			files := map[string][]byte{}
			for k, v := range good {
				files[k] = v
			}
			tc.damage(files)
			dir := copyDir(t, files)
			before := dirFiles(t, dir)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			cmd := exec.CommandContext(ctx, swmgrBin, serveArgs(dir, freeAddr(t))...)
			cmd.Env = append(os.Environ(), "SWMGR_ADMIN_PASSWORD=black-box-admin-password")
			out, err := cmd.CombinedOutput()
			if err == nil || ctx.Err() != nil {
				t.Fatalf("swmgr started (or hung): %v\n%s", err, out)
			}
			if !strings.Contains(string(out), tc.want) || !strings.Contains(strings.ToLower(string(out)), "restore") {
				t.Errorf("the message does not say %q and how to restore:\n%s", tc.want, out)
			}
			after := dirFiles(t, dir)
			if strings.Join(names(after), " ") != strings.Join(names(before), " ") {
				t.Errorf("files before %v, after %v", names(before), names(after))
			}
			for name, data := range before {
				if !bytes.Equal(after[name], data) {
					t.Errorf("%s changed", name)
				}
			}
		})
	}
	// The undamaged copy starts, with its configuration.
	s = startServer(t, copyDir(t, good))
	s.expect(t, 200, "GET", "/config/NtpServer?IpAddr=192.0.2.41", "")
	s.expect(t, 200, "GET", "/config/User?Name=integrity", "")
}

// recordHeaderSize is the size of a stored object's header before its JSON
// (internal/store's record format, version 1).
const recordHeaderSize = 1 + 8 + 8 + 8 + 16 + 4

// damageRecord returns a copy of the database db with damage done to the
// one object record (in the "obj" bucket) whose JSON holds mark.
func damageRecord(t *testing.T, db []byte, mark string, damage func(rec []byte)) []byte {
	t.Helper()
	path := filepath.Join(t.TempDir(), "swmgr.db")
	if err := os.WriteFile(path, db, 0o600); err != nil {
		t.Fatal(err)
	}
	bdb, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	err = bdb.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket([]byte("obj"))
		var puts [][2][]byte
		b.ForEach(func(k, v []byte) error {
			if bytes.Contains(v, []byte(mark)) {
				rec := bytes.Clone(v)
				damage(rec)
				puts = append(puts, [2][]byte{bytes.Clone(k), rec})
			}
			return nil
		})
		for _, p := range puts {
			found++
			if err := b.Put(p[0], p[1]); err != nil {
				return err
			}
		}
		return nil
	})
	bdb.Close()
	if err != nil || found != 1 {
		t.Fatalf("damaged %d records holding %s: %v", found, mark, err)
	}
	out, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return out
}
