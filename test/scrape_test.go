package test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
)

// TestScrapeUnderCentralAAA: with TACACS+ on, a real Prometheus scrapes
// /metrics over HTTPS with the metrics token (authorization
// credentials_file) and gets the metrics, whatever the central servers
// say; a second job scraping with the local admin's Basic credentials
// (which the server refuses) gets 401 on every scrape, never 429, and
// when the server goes away the admin logs in from the scraper's address.
// The token rotates by rewriting its file: the old one is refused from the
// next request on, the new one read.
func TestScrapeUnderCentralAAA(t *testing.T) {
	needTool(t, "prometheus")
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15}})
	dir := t.TempDir()
	tokenFile := filepath.Join(dir, "metrics-token")
	oldToken, newToken := strings.Repeat("a1", 20), strings.Repeat("b2", 20)
	if err := os.WriteFile(tokenFile, []byte(oldToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr, "--metrics-token-file", tokenFile)
	s.expect(t, 200, "PATCH", "/config/AAAGlobal", `{"Accounting":false}`)
	s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(tac.Port)+`,"Secret":"`+tacKey+`"}`)
	s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)

	tlsConf := fmt.Sprintf("    scheme: https\n    tls_config: {ca_file: '%s'}\n", filepath.Join(s.dir, "tls-cert.pem"))
	startPrometheus(t, fmt.Sprintf(`global:
  scrape_interval: 1s
scrape_configs:
  - job_name: token
%s    authorization: {type: Bearer, credentials_file: '%s'}
    static_configs: [{targets: ['%s']}]
  - job_name: local_account
%s    basic_auth: {username: admin, password: '%s'}
    static_configs: [{targets: ['%s']}]
`, tlsConf, tokenFile, addr, tlsConf, blackBoxAdminPassword, addr))

	// scrapes counts the access log's lines of /metrics by who and status.
	line := regexp.MustCompile(`user="?([^" ]+(?: token\))?)"? source=\S+ method=GET route=metrics path=/metrics status=(\d+)`)
	scrapes := func() map[string]int {
		n := map[string]int{}
		for _, m := range line.FindAllStringSubmatch(s.logs.String(), -1) {
			n[m[1]+" "+m[2]]++
		}
		return n
	}
	const byToken, byAdmin = "(bearer token) 200", "admin 401"
	waitFor := func(what string, done func(map[string]int) bool) {
		t.Helper()
		for deadline := time.Now().Add(60 * time.Second); !done(scrapes()); time.Sleep(100 * time.Millisecond) {
			if time.Now().After(deadline) {
				t.Fatalf("%s: scrapes so far %v", what, scrapes())
			}
		}
	}
	// Well past the five failures that lock a name out at an address.
	waitFor("token scrapes and 12 refused local-account scrapes", func(n map[string]int) bool { return n[byToken] >= 3 && n[byAdmin] >= 12 })
	if n := scrapes(); n["admin 429"] > 0 {
		t.Errorf("the local-account scrapes were throttled: %v", n)
	}
	body := scrape(t, s)
	if !bytes.Contains(body, []byte("swmgr_")) {
		t.Fatalf("no swmgr metrics")
	}

	// Rotation: the file rewritten; the old token is refused at once.
	tmp := tokenFile + ".new"
	os.WriteFile(tmp, []byte(newToken+"\n"), 0o600)
	if err := os.Rename(tmp, tokenFile); err != nil {
		t.Fatal(err)
	}
	hc := unvalidatedHTTPSClient(t, s.dir, "")
	for token, want := range map[string]int{oldToken: 401, newToken: 200, "": 401} {
		code, body := send(t, hc, "GET", "https://"+addr+"/metrics", "", "", "", "Authorization", "Bearer "+token)
		if code != want {
			t.Errorf("token %q after the rotation: %d %.200s; want %d", token, code, body, want)
		}
	}
	before := scrapes()[byToken]
	waitFor("Prometheus scrapes with the rotated token", func(n map[string]int) bool { return n[byToken] >= before+3 })

	// The servers go away: the break-glass admin logs in from the
	// scraper's address.
	tac.Stop()
	if code, body := send(t, hc, "GET", "https://"+addr+"/public/v1/config/SystemParam", "admin", blackBoxAdminPassword, ""); code != 200 {
		t.Errorf("the local admin from the scraper's address with the servers gone: %d %s", code, body)
	}
}
