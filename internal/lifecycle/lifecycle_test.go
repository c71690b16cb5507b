package lifecycle

import (
	"bytes"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/backend"
	"github.com/swmgr/swmgr/internal/configfile"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/model"
)

// seedAll gives every config kind objects that differ from the defaults,
// through the API: a breakout with a configured sub-port, references
// across kinds, and secrets.
func seedAll(s *switchHarness) {
	for _, f := range []struct{ method, path, body string }{
		{"PATCH", "/config/SystemParam", `{"Hostname":"leaf1","Description":"rack 4","Timezone":"Europe/Paris"}`},
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort1","Description":"uplink","AdminState":"UP","Mtu":9000}`},
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"4x10"}`},
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort5s2","AdminState":"UP","Description":"sub"}`},
		{"POST", "/config/Vrf", `{"Vrf":"red"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.0.1/24","Vrf":"red"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort5s2","IpAddr":"10.5.2.1/24"}`},
		{"PATCH", "/config/BGPGlobal", `{"ASNum":"65010","RouterId":"192.0.2.1","Redistribution":[{"Sources":"CONNECTED,STATIC"}]}`},
		{"POST", "/config/LogicalIntf", `{"Name":"Loopback1"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"Loopback1","IpAddr":"10.255.0.1/32"}`},
		{"POST", "/config/IPv4Unnumbered", `{"IntfRef":"fpPort2","Interface":"Loopback1"}`},
		{"POST", "/config/IPv4Route", `{"DestinationNw":"172.16.0.0","NetworkMask":"255.255.0.0","NextHop":[{"NextHopIp":"10.5.2.2","Weight":2},{"NextHopIp":"10.5.2.3"}]}`},
		{"PATCH", "/config/LLDPGlobal", `{"Enable":true,"TranmitInterval":60}`},
		{"POST", "/config/LLDPIntf", `{"IntfRef":"fpPort2","TxRxMode":"RxOnly"}`},
		{"PATCH", "/config/DhcpRelayGlobal", `{"Enable":true,"HopCountLimit":8}`},
		{"POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["10.9.0.1","10.9.0.2"],"Vrf":"red"}`},
		{"POST", "/config/BGPVrf", `{"Name":"red","EBGPMaxPaths":4}`},
		{"POST", "/config/BfdSessionParam", `{"Name":"fast","RequiredMinRxInterval":100,"DesiredMinTxInterval":100,"AuthData":"bfd-secret-1"}`},
		{"PATCH", "/config/BfdGlobal", `{"Enable":false}`},
		{"POST", "/config/BfdSession", `{"IpAddr":"192.0.2.9","ParamName":"fast"}`},
		{"POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"192.0.2.2","PeerAS":"65020","AuthPassword":"md5-secret-1","UpdateSource":"Loopback1","MultiHopEnable":true,"MultiHopTTL":3,"BfdEnable":true,"BfdSessionParam":"fast"}`},
		{"POST", "/config/Vlan", `{"VlanId":100,"IntfList":["fpPort3"],"UntagIntfList":["fpPort4"],"Description":"servers"}`},
		{"POST", "/config/Span", `{"SpanSessionName":"mon1","DstIntfRef":"fpPort2","SrcIntfRefList":["fpPort3"]}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10","MinPoll":4,"MaxPoll":8}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"ntp.example.net","Prefer":true}`},
		{"POST", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.99","Port":2222,"Username":"arch","Password":"cas-secret-1","Interval":0}`},
		{"POST", "/config/User", `{"Name":"admin","Password":"admin-secret-1","Group":"admin"}`},
		{"POST", "/config/User", `{"Name":"bob","Password":"bob-secret-12","Group":"operator"}`},
		// Central AAA and management services, on loopback ports nobody
		// serves: the round trip carries them, and nothing is sent away.
		{"POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":4949,"Secret":"tacacs-secret-1"}`},
		{"POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":18120,"AcctPort":18130,"Secret":"radius-secret-1","Priority":2}`},
		{"POST", "/config/SyslogCollector", `{"ServerIpAddr":"127.0.0.1","Port":5514,"Transport":"TCP"}`},
		{"POST", "/config/IntentSource", `{"URL":"http://127.0.0.1:9/intent.json","Interval":86400,"Password":"intent-token-1","AllowUnsigned":true}`},
		{"POST", "/config/DNSServer", `{"IPAddr":"192.0.2.53"}`},
		{"POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort6","fpPort7"],"MinLinks":1}`},
		{"POST", "/config/BGPv4PeerGroup", `{"Name":"SPINES","PeerAS":"external","AuthPassword":"pg-secret-1","BfdEnable":true,"BfdSessionParam":"fast"}`},
		{"POST", "/config/IPv6Intf", `{"IntfRef":"fpPort1","IpAddr":"2001:db8:1::1/64"}`},
		{"POST", "/config/IPv6Route", `{"DestinationNw":"2001:db8:99::","NetworkMask":"48","NextHop":[{"NextHopIp":"2001:db8:1::2"}]}`},
		{"POST", "/config/AclRule", `{"RuleName":"deny-ssh","SourceIp":"192.0.2.0","SourceMask":"24","Proto":"TCP","L4DstPort":22,"Action":"Deny","Log":true}`},
		{"POST", "/config/Acl", `{"AclName":"edge","Direction":"IN","IntfList":["PortChannel1","fpPort2"],"RuleNameList":["deny-ssh"]}`},
		{"POST", "/config/ControlPlaneAclRule", `{"Name":"mgmt-ssh","Sequence":10,"Service":"SSH","SourceIp":"198.51.100.0","SourceMask":"24"}`},
		{"PATCH", "/config/DNSGlobal", `{"Domain":"lab.example.net"}`},
		{"POST", "/config/BGPv6PeerGroup", `{"Name":"LEAVES6","PeerAS":"external","HoldTime":9,"KeepaliveTime":3}`},
		{"POST", "/config/BGPv6Neighbor", `{"NeighborAddress":"2001:db8:1::2","PeerGroup":"LEAVES6","NextHopSelf":true}`},
		{"POST", "/config/BGPv6Neighbor", `{"IntfRef":"fpPort1","PeerAS":"65030"}`},
		{"POST", "/config/BGPv4Aggregate", `{"IpPrefix":"10.0.0.0/8","SendSummaryOnly":true}`},
		{"POST", "/config/BGPv6Aggregate", `{"IpPrefix":"2001:db8::/32","GenerateASSet":true}`},
		{"PATCH", "/config/NDPGlobal", `{"ReachableTime":5,"RetransmitInterval":1000}`},
		{"PATCH", "/config/VxlanEndpoint", `{"SourceInterface":"Loopback1"}`},
		{"POST", "/config/Vlan", `{"VlanId":200,"UntagIntfList":["fpPort8"]}`},
		{"POST", "/config/VxlanInstance", `{"Vni":10100,"VlanId":100,"ImportRouteTargets":["65010:100"]}`},
		{"POST", "/config/VxlanVtepInstance", `{"Intf":"vtep10100","Vni":10100,"DstIp":["192.0.2.77"],"TTL":64}`},
		{"POST", "/config/EvpnL3Vni", `{"Vrf":"red","Vni":4001,"VlanId":200}`},
		{"PATCH", "/config/BGPL2vpnEvpn", `{"AdvertiseAllVni":true}`},
		{"POST", "/config/BGPL2vpnEvpnNeighbor", `{"Neighbor":"SPINES","RouteReflectorClient":true}`},
		{"POST", "/config/PolicyPrefixSet", `{"Name":"LOOPS","PrefixList":[{"Prefix":"10.255.0.0/16","MaskLengthRange":"32-32"},{"Prefix":"2001:db8::/32"}]}`},
		{"POST", "/config/PolicyCondition", `{"Name":"NOT-DEFAULT","ConditionType":"MatchDstIpPrefix","IpPrefix":"0.0.0.0/0"}`},
		{"POST", "/config/PolicyStmt", `{"Name":"DROP-DEFAULT","Conditions":["NOT-DEFAULT"]}`},
		{"POST", "/config/PolicyDefinition", `{"Name":"FROM-SPINES","Priority":1,"StatementList":[{"Priority":10,"Statement":"DROP-DEFAULT"}],"MatchType":"any"}`},
		{"PATCH", "/config/BGPv4PeerGroup", `{"Name":"SPINES","AdjRIBInFilter":"FROM-SPINES"}`},
	} {
		s.must(f.method, f.path, f.body, nil)
	}
}

// compare reports every difference between two snapshots, field by field,
// skipping users (restores leave them alone).
func compare(t *testing.T, what string, want, got map[string]objectState, sameIDs bool) {
	t.Helper()
	for key, w := range want {
		if strings.HasPrefix(key, "User|") {
			continue
		}
		g, ok := got[key]
		if !ok {
			t.Errorf("%s: %s is missing", what, key)
			continue
		}
		for name, v := range w.obj {
			if !reflect.DeepEqual(v, g.obj[name]) {
				t.Errorf("%s: %s %s is %#v, want %#v", what, key, name, g.obj[name], v)
			}
		}
		if sameIDs && w.id != g.id {
			t.Errorf("%s: %s has ObjectId %s, want %s (kept)", what, key, g.id, w.id)
		}
	}
	for key := range got {
		if _, ok := want[key]; !ok && !strings.HasPrefix(key, "User|") {
			t.Errorf("%s: %s should not exist", what, key)
		}
	}
}

func TestSaveResetRestoreRoundTrip(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	seedAll(s)
	rev0, saved := s.snapshot()
	kinds := map[string]bool{}
	for key := range saved {
		kinds[strings.Split(key, "|")[0]] = true
	}
	for _, k := range s.eng.Registry().Kinds() {
		if k.Class == model.Config && !kinds[k.Name] {
			t.Fatalf("the fixtures have no %s: the round trip must cover every kind", k.Name)
		}
	}

	var res SaveResult
	s.must("POST", "/action/SaveConfig", `{}`, &res)
	file := filepath.Join(s.dir, StartupConfig)
	if res.File != "file://"+file || res.Revision != rev0 || res.Encrypted {
		t.Fatalf("SaveConfig answered %+v", res)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if fi, _ := os.Stat(file); fi.Mode().Perm() != 0o600 {
		t.Errorf("mode %v", fi.Mode().Perm())
	}
	for _, secret := range []string{"md5-secret-1", "cas-secret-1", "bfd-secret-1"} {
		if bytes.Contains(data, []byte(secret)) {
			t.Fatalf("the saved file shows the secret %q", secret)
		}
	}
	if bytes.Contains(data, []byte(`"User"`)) {
		t.Error("the saved file holds users")
	}
	var sys struct{ Object map[string]any }
	s.must("GET", "/state/SystemParam", "", &sys)
	if sys.Object["UnsavedChanges"] != false || sys.Object["SavedRevision"] != float64(rev0) {
		t.Fatalf("SystemParamState after the save: %v", sys.Object)
	}

	// Change things: update, delete, create; a sub-port back to defaults.
	for _, f := range []struct{ method, path, body string }{
		{"PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.10","MinPoll":6}`},
		{"DELETE", "/config/Span", `{"SpanSessionName":"mon1"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.11"}`},
		{"DELETE", "/config/IPv4Intf", `{"IntfRef":"fpPort5s2"}`},
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort5","BreakOutMode":"1x40"}`},
		{"PATCH", "/config/SystemParam", `{"Hostname":"changed"}`},
		{"PATCH", "/config/BGPv4Neighbor", `{"NeighborAddress":"192.0.2.2","AuthPassword":"other-secret"}`},
	} {
		s.must(f.method, f.path, f.body, nil)
	}
	s.must("GET", "/state/SystemParam", "", &sys)
	if sys.Object["UnsavedChanges"] != true {
		t.Fatalf("SystemParamState after changes: %v", sys.Object)
	}
	_, changed := s.snapshot()

	// A dry run reports the diff and changes nothing.
	before := s.revision()
	var dry struct {
		DryRun  bool
		Changes []engine.Diff
	}
	s.must("POST", "/action/ResetConfigToFile?dry_run=true", `{}`, &dry)
	if !dry.DryRun || len(dry.Changes) == 0 || s.revision() != before {
		t.Fatalf("dry run: %+v, revision %d -> %d", dry, before, s.revision())
	}
	ops := map[string]int{}
	for _, d := range dry.Changes {
		ops[d.Op]++
		if strings.Contains(string(d.Before)+string(d.After), "secret") {
			t.Fatalf("a diff shows a secret: %s %s", d.Before, d.After)
		}
	}
	if ops["create"] == 0 || ops["delete"] == 0 || ops["update"] == 0 {
		t.Errorf("dry-run diff ops %v, want creates, updates and deletes", ops)
	}

	// The restore: one commit, one revision, equal to the saved one.
	var out struct {
		Revision uint64
		Changes  int
	}
	s.must("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"///`+strings.TrimPrefix(file, "/")+`"}`, &out)
	if out.Revision != before+1 || s.revision() != before+1 {
		t.Fatalf("the restore made revision %d (running %d), want one commit: %d", out.Revision, s.revision(), before+1)
	}
	_, restored := s.snapshot()
	compare(t, "after the restore", saved, restored, false)
	// ObjectIds of objects that existed throughout are kept.
	for key, c := range changed {
		if r, ok := restored[key]; ok && saved[key].id == c.id && r.id != c.id {
			t.Errorf("%s: ObjectId changed from %s to %s", key, c.id, r.id)
		}
	}
	if restored["NtpServer|192.0.2.10"].id != saved["NtpServer|192.0.2.10"].id {
		t.Error("an updated object lost its ObjectId")
	}
	// Restoring the same file again changes nothing.
	s.must("POST", "/action/ResetConfigToFile", `{}`, &out)
	if out.Changes != 0 {
		t.Errorf("a second restore made %d changes", out.Changes)
	}

	// Factory reset: created objects go, discovered ones return to their
	// defaults but for what the switch reports of them (kept), admins
	// stay, other users go.
	_, preReset := s.snapshot()
	s.must("POST", "/action/ResetConfig", `{}`, &out)
	_, reset := s.snapshot()
	for key, o := range reset {
		kind := strings.Split(key, "|")[0]
		k := s.eng.Registry().Lookup(model.Config, kind)
		switch {
		case kind == "User":
			if o.obj.Str("Group") != "admin" {
				t.Errorf("reset kept user %s", key)
			}
		case k.Creatable():
			t.Errorf("reset kept %s", key)
		default:
			for _, f := range k.Fields {
				want := k.Defaults()[f.Name]
				if b, ok := preReset[key]; ok && f.Discovered {
					want = b.obj[f.Name]
				}
				if !f.ReadOnly && !f.Key && !reflect.DeepEqual(o.obj[f.Name], want) {
					t.Errorf("after reset %s %s = %#v, want %#v", key, f.Name, o.obj[f.Name], want)
				}
			}
		}
	}
	if _, ok := reset["User|admin"]; !ok {
		t.Fatal("reset removed the admin")
	}
	if _, ok := reset["Port|fpPort5s2"]; ok {
		t.Fatal("reset kept a breakout sub-port")
	}
	s.must("POST", "/action/ResetConfigToFile", `{}`, &out)
	_, again := s.snapshot()
	compare(t, "after reset and restore", saved, again, false)
}

func TestEncryptedSaveRestore(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	seedAll(s)
	_, saved := s.snapshot()
	file := filepath.Join(t.TempDir(), "enc-config")
	var res SaveResult
	s.must("POST", "/action/SaveConfig", `{"DstFileURI":"file://`+file+`","Nonce":"site-7","Passphrase":"long pass phrase"}`, &res)
	if !res.Encrypted {
		t.Fatalf("%+v", res)
	}
	data, _ := os.ReadFile(file)
	if !configfile.IsEncrypted(data) || bytes.Contains(data, []byte("ConfigData")) || bytes.Contains(data, []byte("secret")) {
		t.Fatal("the file is not encrypted")
	}
	s.must("PATCH", "/config/SystemParam", `{"Hostname":"changed"}`, nil)
	s.must("DELETE", "/config/ConfigArchiveServer", `{"IpAddr":"192.0.2.99"}`, nil)

	truncated := filepath.Join(t.TempDir(), "truncated")
	os.WriteFile(truncated, data[:len(data)/2], 0o600)
	flipped := filepath.Join(t.TempDir(), "flipped")
	f := bytes.Clone(data)
	f[len(f)/2] ^= 0x10
	os.WriteFile(flipped, f, 0o600)
	plainOther := filepath.Join(t.TempDir(), "plain")
	os.WriteFile(plainOther, []byte(`{"ConfigData":{}}`), 0o600)
	newer := filepath.Join(t.TempDir(), "newer")
	os.WriteFile(newer, []byte(`{"Format":9,"ConfigData":{}}`), 0o600)
	rev := s.revision()
	for _, tc := range []struct{ name, body, want string }{
		{"wrong passphrase", `{"SrcFileURI":"file://` + file + `","Nonce":"site-7","Passphrase":"wrong phrase"}`, "wrong Nonce or Passphrase"},
		{"wrong nonce", `{"SrcFileURI":"file://` + file + `","Nonce":"site-8","Passphrase":"long pass phrase"}`, "wrong Nonce or Passphrase"},
		{"no passphrase", `{"SrcFileURI":"file://` + file + `"}`, "encrypted"},
		{"truncated", `{"SrcFileURI":"file://` + truncated + `","Nonce":"site-7","Passphrase":"long pass phrase"}`, "cannot be decrypted"},
		{"flipped byte", `{"SrcFileURI":"file://` + flipped + `","Nonce":"site-7","Passphrase":"long pass phrase"}`, "cannot be decrypted"},
		{"a plain file with a passphrase", `{"SrcFileURI":"file://` + plainOther + `","Nonce":"site-7","Passphrase":"long pass phrase"}`, "not encrypted"},
		{"another format version", `{"SrcFileURI":"file://` + newer + `"}`, "newer swmgr"},
	} {
		code, body := s.do("POST", "/action/ResetConfigToFile", tc.body)
		if code != http.StatusBadRequest || !strings.Contains(string(body), tc.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tc.name, code, body, tc.want)
		}
		if s.revision() != rev {
			t.Fatalf("%s changed the configuration", tc.name)
		}
	}
	// Another switch (another secret.key) restores the encrypted file,
	// secrets included.
	other := newSwitch(t, harnessOptions{})
	other.must("POST", "/config/User", `{"Name":"admin","Password":"admin-secret-1","Group":"admin"}`, nil)
	var out struct{ Revision uint64 }
	other.must("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"file://`+file+`","Nonce":"site-7","Passphrase":"long pass phrase"}`, &out)
	_, got := other.snapshot()
	compare(t, "another switch", saved, got, false)
	if got["BGPv4Neighbor|default\x00192.0.2.2\x00"].obj.Str("AuthPassword") != "md5-secret-1" || got["BfdSessionParam|fast"].obj.Str("AuthData") != "bfd-secret-1" {
		t.Error("the secrets did not move with the encrypted file")
	}
	// A plain file does not: its secrets are sealed with the first switch's key.
	s.must("POST", "/action/SaveConfig", `{"DstFileURI":"file://`+file+`.plain"}`, nil)
	code, body := other.do("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"file://`+file+`.plain"}`)
	if code != http.StatusBadRequest || !strings.Contains(string(body), "another switch") {
		t.Errorf("a plain file on another switch: %d %s", code, body)
	}
}

func TestFormatOneFile(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	file := filepath.Join(t.TempDir(), "flexswitch.json")
	os.WriteFile(file, []byte(`{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.5","MinPoll":5}],"SystemParam":[{"Vrf":"default","Hostname":"old","SwVersion":"1.0"}]}}`), 0o600)
	var out struct{ Format int }
	s.must("POST", "/action/ResetConfigToFile", `{"SrcFileURI":"file://`+file+`"}`, &out)
	_, got := s.snapshot()
	if out.Format != 1 || got["NtpServer|192.0.2.5"].obj.Int("MinPoll") != 5 || got["SystemParam|default"].obj.Str("Hostname") != "old" {
		t.Fatalf("format 1: %+v %v", out, got["SystemParam|default"].obj)
	}
}

func TestSaveConfigNames(t *testing.T) {
	s := newSwitch(t, harnessOptions{})
	var res SaveResult
	s.must("POST", "/action/SaveConfig", `{"FileName":"backup-1"}`, &res)
	if res.File != "file://"+filepath.Join(s.dir, "backup-1") {
		t.Fatalf("1.x FileName saved to %s", res.File)
	}
	s.must("POST", "/action/SaveConfig", `{"Timestamp":"append"}`, &res)
	if !strings.HasPrefix(res.File, "file://"+filepath.Join(s.dir, "startup-config-")) || !strings.HasSuffix(res.File, "Z") {
		t.Fatalf("append: %s", res.File)
	}
	s.must("POST", "/action/SaveConfig", `{"Timestamp":"prepend","DstFileURI":"file://`+s.dir+`/cfg"}`, &res)
	if !strings.HasPrefix(res.File, "file://"+s.dir+"/2") || !strings.HasSuffix(res.File, "Z-cfg") {
		t.Fatalf("prepend: %s", res.File)
	}
	if _, err := os.Stat(strings.TrimPrefix(res.File, "file://")); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreOfAFileFromBeforeAMigration: a file saved at schema version 1,
// restored by a model at version 2 that counts NtpServer's MaxPoll from
// MinPoll and prefixes BGPv4Neighbor's sealed AuthPassword
// (enginetest.LaterSchema): the objects are restored in the new form
// (the secret opened, migrated and sealed again), valid, and the switch is
// given that form. ApplyConfig's body is a request in the current form:
// it is not migrated.
func TestRestoreOfAFileFromBeforeAMigration(t *testing.T) {
	dir := t.TempDir()
	s := newSwitch(t, harnessOptions{dataDir: dir})
	s.must("POST", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MinPoll":5,"MaxPoll":12}`, nil)
	s.must("POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"192.0.2.2","PeerAS":"65002","AuthPassword":"first"}`, nil)
	s.must("POST", "/action/SaveConfig", `{}`, nil)
	s.must("PATCH", "/config/NtpServer", `{"IpAddr":"192.0.2.1","MaxPoll":14}`, nil)
	s.must("PATCH", "/config/BGPv4Neighbor", `{"NeighborAddress":"192.0.2.2","AuthPassword":"second"}`, nil)
	s.close()

	given := map[string]model.Object{}
	s = newSwitch(t, harnessOptions{dataDir: dir, reg: enginetest.LaterSchema(t), given: func(c backend.Change) { given[c.Kind.Name] = c.After }})
	s.must("POST", "/action/ResetConfigToFile", `{}`, nil)
	_, objs := s.snapshot()
	ntp, nbr := objs["NtpServer|192.0.2.1"].obj, objs["BGPv4Neighbor|default\x00192.0.2.2\x00"].obj
	if ntp.Int("MaxPoll") != 7 || nbr.Str("AuthPassword") != "md5:first" {
		t.Errorf("restored: MaxPoll %d, AuthPassword %q; want 7 (12 counted from 5), md5:first", ntp.Int("MaxPoll"), nbr.Str("AuthPassword"))
	}
	if err := s.eng.Registry().Lookup(model.Config, "NtpServer").Validate(ntp); err != nil {
		t.Errorf("the restored NtpServer: %v", err)
	}
	if given["NtpServer"].Int("MaxPoll") != 7 || given["BGPv4Neighbor"].Str("AuthPassword") != "md5:first" {
		t.Errorf("the switch was given MaxPoll %d, AuthPassword %q", given["NtpServer"].Int("MaxPoll"), given["BGPv4Neighbor"].Str("AuthPassword"))
	}
	// The file saved now names version 2, and restores as it is.
	s.must("POST", "/action/SaveConfig", `{}`, nil)
	data, err := os.ReadFile(filepath.Join(dir, StartupConfig))
	if err != nil || !bytes.HasPrefix(data, []byte(`{"Format":3,"SchemaVersion":2,`)) {
		t.Fatalf("the file saved at version 2: %.40s %v", data, err)
	}
	s.must("POST", "/action/ResetConfigToFile", `{}`, nil)
	if _, objs = s.snapshot(); objs["NtpServer|192.0.2.1"].obj.Int("MaxPoll") != 7 {
		t.Errorf("a version 2 file restored by version 2: %v", objs["NtpServer|192.0.2.1"].obj)
	}
	s.must("POST", "/action/ApplyConfig", `{"ConfigData":{"NtpServer":[{"IpAddr":"192.0.2.1","MinPoll":5,"MaxPoll":8}]}}`, nil)
	if _, objs = s.snapshot(); objs["NtpServer|192.0.2.1"].obj.Int("MaxPoll") != 8 {
		t.Errorf("ApplyConfig's body, in the current form: %v", objs["NtpServer|192.0.2.1"].obj)
	}
}
