package test

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
)

// TestFleetAccountingTellsSwitchesApart: three switches (three swmgr, three
// data directories) make the same commits, so their records carry the same
// revision numbers, and account them to one FreeRADIUS and one tacquito.
// Every record arrives at both, each names its switch (NAS-Identifier and
// the TACACS+ port: its host name; NAS-IP-Address), and no two share a
// session id or the key FreeRADIUS's acct_unique derives (which SQL
// accounting and duplicate detection go by).
func TestFleetAccountingTellsSwitchesApart(t *testing.T) {
	const radSecret = "fleet-radius-secret"
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15}})
	rad := aaatest.StartRadius(t, radSecret, []aaatest.User{{Name: "radop", Password: "radius-oper-pass"}})
	switches := []string{"sw1", "sw2", "sw3"}
	revisions := map[string]bool{}
	for _, name := range switches {
		addr := freeAddr(t)
		s := startServer(t, "", "--https", addr)
		s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"`+name+`"}`)
		s.expect(t, 201, "POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(rad.Port)+`,"AcctPort":`+strconv.Itoa(rad.AcctPort)+`,"Secret":"`+radSecret+`","Timeout":2}`)
		s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(tac.Port)+`,"Secret":"`+tacKey+`"}`)
		s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)
		// By a central user (tacquito accounts only the users it knows).
		if code, body := send(t, httpsClient(t, s.dir, ""), "POST", "https://"+addr+"/public/v1/config/NtpServer", "netadmin", "remote-admin-pass", `{"IpAddr":"192.0.2.50"}`); code != 201 {
			t.Fatalf("%s: %d %s", name, code, body)
		}
		revisions[strings.Trim(s.do(t, "GET", "/config/NtpServer?IpAddr=192.0.2.50", "").hdr.Get("ETag"), `W/"`)] = true
	}
	if len(revisions) != 1 {
		t.Fatalf("the switches' commits have revisions %v; the test needs them equal", revisions)
	}
	const what = "create NtpServer IpAddr=192.0.2.50"
	for deadline := time.Now().Add(30 * time.Second); strings.Count(rad.Accounting(), what) < len(switches) || strings.Count(tac.Accounting(), what) < len(switches); time.Sleep(50 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not every record arrived:\nFreeRADIUS:\n%s\ntacquito:\n%s", rad.Accounting(), tac.Accounting())
		}
	}

	// FreeRADIUS: the detail file's records of the NtpServer commit.
	var records []string
	for _, rec := range strings.Split(rad.Accounting(), "\n\n") {
		if strings.Contains(rec, what) {
			records = append(records, rec)
		}
	}
	attr := func(rec, name string) string {
		m := regexp.MustCompile(`(?m)^\s*` + name + ` = "?([^"\n]*)"?$`).FindStringSubmatch(rec)
		if m == nil {
			return ""
		}
		return m[1]
	}
	seen := map[string]map[string]bool{"NAS-Identifier": {}, "Acct-Session-Id": {}, "Acct-Unique-Session-Id": {}}
	for _, rec := range records {
		if attr(rec, "NAS-IP-Address") != "127.0.0.1" {
			t.Errorf("a record without the switch's NAS-IP-Address:\n%s", rec)
		}
		for name, values := range seen {
			v := attr(rec, name)
			if v == "" || values[v] {
				t.Errorf("%s %q is missing or repeated:\n%s", name, v, rad.Accounting())
			}
			values[v] = true
		}
	}
	for _, name := range switches {
		if !seen["NAS-Identifier"][name] {
			t.Errorf("no FreeRADIUS record names %s: %v", name, seen["NAS-Identifier"])
		}
	}

	// tacquito: one record per switch, its port the switch's name, its
	// task_id its own.
	var lines []string
	for _, l := range strings.Split(tac.Accounting(), "\n") {
		if strings.Contains(l, what) {
			lines = append(lines, l)
		}
	}
	tasks := map[string]bool{}
	for _, l := range lines {
		m := regexp.MustCompile(`task_id=(\S+?)[" ,\]]`).FindStringSubmatch(l)
		if m == nil || tasks[m[1]] {
			t.Errorf("task_id missing or repeated in %s", l)
			continue
		}
		tasks[m[1]] = true
	}
	for _, name := range switches {
		n := 0
		for _, l := range lines {
			if strings.Contains(l, `"`+name+`"`) {
				n++
			}
		}
		if n != 1 {
			t.Errorf("%d tacquito records name %s, want 1:\n%s", n, name, strings.Join(lines, "\n"))
		}
	}
}
