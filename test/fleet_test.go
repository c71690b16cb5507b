package test

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
)

// TestFleetOfTen: ten switches on loopback, each with a certificate of
// the fleet's CA and the fleet's metrics token, scraped by one Prometheus
// job (one CA file, one token) every second, while central AAA (TACACS+
// and RADIUS) is turned on and off twice on every switch. Every scrape of
// every switch succeeds throughout; every commit made by a central user
// while central AAA is on is accounted at both servers once, naming its
// switch, none dropped; commits made while it is off are accounted to
// neither.
func TestFleetOfTen(t *testing.T) {
	needTool(t, "prometheus")
	const n, radSecret = 10, "fleet-radius-secret"
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15}})
	rad := aaatest.StartRadius(t, radSecret, []aaatest.User{{Name: "radop", Password: "radius-oper-pass"}})
	ca := newFleetCA(t)
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "metrics-token")
	if err := os.WriteFile(tokenFile, []byte(strings.Repeat("f1", 20)+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	caPEM, err := os.ReadFile(ca.cert)
	if err != nil || !pool.AppendCertsFromPEM(caPEM) {
		t.Fatalf("the fleet CA: %v", err)
	}
	client := &http.Client{Timeout: 20 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}

	type fleetSwitch struct {
		name, addr string
		s          *server
	}
	var fleet []fleetSwitch
	var targets []string
	for i := 1; i <= n; i++ {
		name := fmt.Sprintf("sw%02d", i)
		cert, key := ca.enrol(t, dir, name, "127.0.0.1")
		addr := freeAddr(t)
		s := startServer(t, "", "--https", addr, "--tls-cert", cert, "--tls-key", key, "--metrics-token-file", tokenFile, "--access-log=false")
		s.expect(t, 200, "PATCH", "/config/SystemParam", `{"Hostname":"`+name+`"}`)
		fleet = append(fleet, fleetSwitch{name: name, addr: addr, s: s})
		targets = append(targets, "'"+addr+"'")
	}
	prom := promAPI(startPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: fleet
    scheme: https
    tls_config: {ca_file: '%s'}
    authorization: {type: Bearer, credentials_file: '%s'}
    static_configs: [{targets: [%s]}]
`, ca.cert, tokenFile, strings.Join(targets, ", "))))

	// Prometheus scrapes every switch before central AAA changes.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(200 * time.Millisecond) {
		up, err := prom.query(`up{job="fleet"} == 1`)
		if err == nil && len(up) == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Prometheus does not scrape the %d switches: %v %v", n, up, err)
		}
	}
	begin := time.Now()
	central := func(on bool) {
		t.Helper()
		for _, sw := range fleet {
			if on {
				sw.s.expect(t, 201, "POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(rad.Port)+`,"AcctPort":`+strconv.Itoa(rad.AcctPort)+`,"Secret":"`+radSecret+`","Timeout":2}`)
				sw.s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(tac.Port)+`,"Secret":"`+tacKey+`"}`)
				sw.s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)
				continue
			}
			sw.s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"false"}`)
			sw.s.expect(t, 200, "DELETE", "/config/Tacacs?ServerIp=127.0.0.1", "")
			sw.s.expect(t, 200, "DELETE", "/config/RadiusServer?ServerIp=127.0.0.1", "")
		}
	}
	commit := func(user, password, server string) {
		t.Helper()
		for _, sw := range fleet {
			code, body := send(t, client, "POST", "https://"+sw.addr+"/public/v1/config/NtpServer", user, password, `{"IpAddr":"`+server+`"}`)
			if code != 201 {
				t.Fatalf("%s: a commit by %s: %d %s", sw.name, user, code, body)
			}
		}
	}
	var accounted, unaccounted []string
	for round := 1; round <= 2; round++ {
		central(true)
		on := fmt.Sprintf("192.0.2.%d", round)
		commit("netadmin", "remote-admin-pass", on)
		accounted = append(accounted, "create NtpServer IpAddr="+on)
		time.Sleep(2 * time.Second) // scrapes with central AAA on
		central(false)
		off := fmt.Sprintf("198.51.100.%d", round)
		commit("admin", blackBoxAdminPassword, off)
		unaccounted = append(unaccounted, "create NtpServer IpAddr="+off)
		time.Sleep(2 * time.Second) // and off
	}

	// Accounting: each central commit of each switch, once at each server.
	want := n * len(accounted)
	count := func(log string) int {
		c := 0
		for _, what := range accounted {
			c += strings.Count(log, what)
		}
		return c
	}
	for deadline := time.Now().Add(60 * time.Second); count(rad.Accounting()) < want || count(tac.Accounting()) < want; time.Sleep(100 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("records: FreeRADIUS %d, tacquito %d of %d", count(rad.Accounting()), count(tac.Accounting()), want)
		}
	}
	time.Sleep(2 * time.Second) // a duplicate would come now
	radLog, tacLog := rad.Accounting(), tac.Accounting()
	for _, what := range unaccounted {
		if strings.Contains(radLog, what) || strings.Contains(tacLog, what) {
			t.Errorf("%q, committed while central AAA was off, was accounted", what)
		}
	}
	nasID := regexp.MustCompile(`(?m)^\s*NAS-Identifier = "?([^"\n]*)"?$`)
	perSwitch := map[string]int{}
	for _, rec := range strings.Split(radLog, "\n\n") {
		for _, what := range accounted {
			if strings.Contains(rec, what) {
				if m := nasID.FindStringSubmatch(rec); m != nil {
					perSwitch["radius "+m[1]]++
				}
			}
		}
	}
	for _, line := range strings.Split(tacLog, "\n") {
		for _, what := range accounted {
			if !strings.Contains(line, what) {
				continue
			}
			for _, sw := range fleet {
				if strings.Contains(line, `"`+sw.name+`"`) {
					perSwitch["tacacs "+sw.name]++
				}
			}
		}
	}
	for _, sw := range fleet {
		for _, server := range []string{"radius", "tacacs"} {
			if got := perSwitch[server+" "+sw.name]; got != len(accounted) {
				t.Errorf("%s has %d records naming %s, want %d", server, got, sw.name, len(accounted))
			}
		}
	}

	// Prometheus: every switch scraped, and no scrape failed since the
	// first one.
	window := time.Since(begin).Round(time.Second) + time.Second
	var up, worst []promSeries
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(time.Second) {
		up, err = prom.query(`up{job="fleet"}`)
		if err != nil {
			t.Fatal(err)
		}
		worst, err = prom.query(fmt.Sprintf(`min_over_time(up{job="fleet"}[%s])`, window))
		if err != nil {
			t.Fatal(err)
		}
		if len(up) == n || time.Now().After(deadline) {
			break
		}
	}
	if len(up) != n {
		t.Fatalf("Prometheus has %d switches up, want %d: %v", len(up), n, up)
	}
	for _, s := range worst {
		if s.value() != 1 {
			t.Errorf("a scrape of %s failed within the run (min up %v)", s.Metric["instance"], s.value())
		}
	}
	scrapes, err := prom.query(fmt.Sprintf(`count_over_time(up{job="fleet"}[%s])`, window))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range scrapes {
		if s.value() < window.Seconds()/3 {
			t.Errorf("%s was scraped %v times in %s: too few to say the scrapes held while AAA changed", s.Metric["instance"], s.value(), window)
		}
	}
	commits, err := prom.query(`swmgr_commit_duration_seconds_count{job="fleet",result="ok"}`)
	if err != nil || len(commits) != n {
		t.Errorf("the commits of each switch in Prometheus: %v %v", commits, err)
	}
	t.Logf("%d switches, 17 commits each, %d accounting records at each server, every scrape of %s succeeded", n, want, window)
}
