package test

import (
	"bytes"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	bolt "go.etcd.io/bbolt"
)

// olderDataDir is a copy of testdata/datadir-c2f6b2c, a data directory an
// older swmgr wrote before the stored schema carried a version
// (testdata/README.md).
func olderDataDir(t *testing.T) string {
	t.Helper()
	return copyDir(t, dirFiles(t, filepath.Join("testdata", "datadir-c2f6b2c")))
}

// TestStartsOnOlderDataDir: today's swmgr starts on a data directory the
// older one wrote, migrates its records once to the current schema version,
// and serves what it held: the configuration, the sealed archive password
// (a saved configuration still carries it), the User and its login.
func TestStartsOnOlderDataDir(t *testing.T) {
	dir := olderDataDir(t)
	s := startServer(t, dir)
	if !strings.Contains(s.logs.String(), "migrated stored records to the current model") || !strings.Contains(s.logs.String(), "from_version=0") {
		t.Errorf("no migration in the log:\n%s", s.logs)
	}
	for path, want := range map[string]string{
		"/config/SystemParam":                            `"Hostname":"fixture-sw"`,
		"/config/Port?IntfRef=fpPort2":                   `"Mtu":9000`,
		"/config/Vlan?VlanId=10":                         `"UntagIntfList":["fpPort4"]`,
		"/config/IPv4Intf?IntfRef=vlan10":                `"IpAddr":"10.10.0.1/24"`,
		"/config/BGPGlobal":                              `"ASNum":"65001"`,
		"/config/BGPv4Neighbor?NeighborAddress=10.0.0.2": `"PeerAS":"65002"`,
		"/config/NtpServer?IpAddr=127.0.0.1":             `"Prefer":true`,
		"/config/ConfigArchiveServer?IpAddr=127.0.0.1":   `"Username":"arch"`,
		"/config/User?Name=bob":                          `"Group":"operator"`,
		"/config/Vrf?Vrf=blue":                           `"Vrf":"blue"`,
	} {
		if r := s.do(t, "GET", path, ""); r.code != 200 || !strings.Contains(string(r.raw), want) {
			t.Errorf("GET %s: %s; want %s", path, r, want)
		}
	}
	req, _ := http.NewRequest("GET", s.base+"/config/Users", nil)
	req.SetBasicAuth("bob", "bob-password-1")
	if resp, err := client.Do(req); err != nil || resp.StatusCode != 200 {
		t.Errorf("bob's login: %v %v", resp, err)
	} else {
		resp.Body.Close()
	}
	// The saved configuration holds the archive server's sealed password:
	// the key it was sealed with still opens it.
	if r := s.do(t, "POST", "/action/SaveConfig", "{}"); r.code != 200 {
		t.Errorf("SaveConfig: %s", r)
	}
	s.stop(t)
	s = startServer(t, dir)
	if strings.Contains(s.logs.String(), "migrated stored records") {
		t.Errorf("the second start migrated again:\n%s", s.logs)
	}
}

// TestDamagedRecordStopsTheStart: a stored record that does not read stops
// the start with a message naming its kind and key, and changes nothing.
func TestDamagedRecordStopsTheStart(t *testing.T) {
	dir := olderDataDir(t)
	db, err := bolt.Open(filepath.Join(dir, "swmgr.db"), 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	found := 0
	// NtpServer 127.0.0.1's key field, now a number: the same length, so
	// the record's framing stays whole.
	from, to := []byte(`"IpAddr":"127.0.0.1","MinPoll"`), []byte(`"IpAddr":12700000001,"MinPoll"`)
	var walk func(b *bolt.Bucket) error
	walk = func(b *bolt.Bucket) error {
		var puts [][2][]byte
		err := b.ForEach(func(k, v []byte) error {
			if v == nil {
				return walk(b.Bucket(k))
			}
			if bytes.Contains(v, from) {
				puts = append(puts, [2][]byte{bytes.Clone(k), bytes.Replace(v, from, to, 1)})
			}
			return nil
		})
		for _, p := range puts {
			found++
			if err := b.Put(p[0], p[1]); err != nil {
				return err
			}
		}
		return err
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == "revs" || string(name) == "log" {
				return nil // the history keeps its records as written
			}
			return walk(b)
		})
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	if found != 1 {
		t.Fatalf("damaged %d records, want 1", found)
	}
	before := dirFiles(t, dir)
	s, err := tryStart(t, dir)
	if err == nil {
		t.Fatal("swmgr started on a damaged record")
	}
	if !strings.Contains(s.logs.String(), `stored NtpServer "127.0.0.1"`) || !strings.Contains(s.logs.String(), "key field IpAddr") {
		t.Errorf("the message does not name the kind and key:\n%s", s.logs)
	}
	after := dirFiles(t, dir)
	delete(after, "swmgr.pid")
	delete(before, "swmgr.pid")
	if !bytes.Equal(before["swmgr.db"], after["swmgr.db"]) {
		t.Error("the refused start changed swmgr.db")
	}
}
