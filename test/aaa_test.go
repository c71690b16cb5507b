package test

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/aaa/aaatest"
)

const tacKey = "black-box-tacacs-key"

// TestRemoteLoginHTTPSAndCLI: with TACACS+ on (tacquito's server on
// loopback) and RADIUS after it, a remote user logs in over HTTPS and through the CLI with the
// role the server gives (priv-lvl 15 admin, 1 read-only); a wrong password
// is 401 and then throttled (429); the commit is accounted at the server
// with its user and revision; with TACACS+ down, FreeRADIUS answers with
// its role (Service-Type NAS-Prompt-User: operator); both down, the local
// admin still gets in and the log says why. The key is in no read, no command line and no
// saved configuration.
func TestRemoteLoginHTTPSAndCLI(t *testing.T) {
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{
		{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15},
		{Name: "viewer", Password: "remote-viewer-pass", PrivLvl: 1},
	})
	rad := aaatest.StartRadius(t, "black-box-radius-secret", []aaatest.User{{Name: "radop", Password: "radius-oper-pass", ServiceType: "NAS-Prompt-User"}})
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr)
	secure := "https://" + addr + "/public/v1"
	hc := httpsClient(t, s.dir, "")
	s.expect(t, 201, "POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(rad.Port)+`,"AcctPort":0,"Secret":"black-box-radius-secret","Timeout":1,"Retries":0}`)
	s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(tac.Port)+`,"Secret":"`+tacKey+`","AuthService":"login"}`)
	s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)

	code, body := send(t, hc, "POST", secure+"/config/NtpServer", "netadmin", "remote-admin-pass", `{"IpAddr":"192.0.2.44"}`)
	if code != 201 {
		t.Fatalf("remote admin POST: %d %s\ntacquito: %s", code, body, tac.Output())
	}
	// Its revision is the ETag of what it made.
	rev := strings.Trim(s.do(t, "GET", "/config/NtpServer?IpAddr=192.0.2.44", "").hdr.Get("ETag"), `W/"`)
	if code, _ := send(t, hc, "GET", secure+"/config/NtpServers", "viewer", "remote-viewer-pass", ""); code != 200 {
		t.Errorf("remote reader GET: %d", code)
	}
	if code, body := send(t, hc, "POST", secure+"/config/NtpServer", "viewer", "remote-viewer-pass", `{"IpAddr":"192.0.2.45"}`); code != 403 {
		t.Errorf("remote reader POST: %d %s, want 403", code, body)
	}
	// The accounting record of the commit names the user and the revision.
	want := "commit revision " + rev + " (rest): create NtpServer IpAddr=192.0.2.44"
	deadline := time.Now().Add(10 * time.Second)
	for !strings.Contains(tac.Accounting(), want) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if acct := tac.Accounting(); !strings.Contains(acct, want) || !strings.Contains(acct, "netadmin") {
		t.Errorf("accounting at the server lacks %q by netadmin:\n%s", want, acct)
	}

	// The CLI, remotely, as the remote admin.
	cmd := exec.Command(swmgrBin, "cli", "--url", "https://"+addr, "--user", "netadmin", "--cacert", filepath.Join(s.dir, "tls-cert.pem"), "-c", "show ntp server")
	cmd.Env = append(os.Environ(), "SWMGR_PASSWORD=remote-admin-pass")
	if out, err := cmd.CombinedOutput(); err != nil || !strings.Contains(string(out), "192.0.2.44") {
		t.Errorf("remote CLI: %v\n%s", err, out)
	}

	// Wrong passwords, each a new guess: 401, then locked out.
	statuses := map[int]int{}
	for i := 0; i < 8; i++ {
		code, _ := send(t, hc, "GET", secure+"/config/NtpServers", "netadmin", fmt.Sprintf("wrong-password-%d", i), "")
		statuses[code]++
	}
	if statuses[401] == 0 || statuses[429] == 0 {
		t.Errorf("wrong passwords: %v, want 401s then 429s", statuses)
	}

	// The key: not in reads, the process's command line, the saved file.
	for _, p := range []string{"/config/Tacacss", "/state/Tacacss", "/revisions?Count=100", "/state/ConfigLogs"} {
		if r := s.do(t, "GET", p, ""); strings.Contains(string(r.raw), tacKey) {
			t.Errorf("GET %s shows the key", p)
		}
	}
	s.expect(t, 200, "POST", "/action/SaveConfig", `{}`)
	saved, err := os.ReadFile(filepath.Join(s.dir, "startup-config"))
	if err != nil || strings.Contains(string(saved), tacKey) || !strings.Contains(string(saved), `"Tacacs"`) {
		t.Errorf("saved configuration (%v) holds the key in clear, or no Tacacs", err)
	}
	if cmdline, err := os.ReadFile("/proc/" + strconv.Itoa(s.cmd.Process.Pid) + "/cmdline"); err != nil || strings.Contains(string(cmdline), tacKey) {
		t.Errorf("command line: %v", err)
	}

	// TACACS+ down: RADIUS answers, with its role (NAS-Prompt-User:
	// operator, who may configure but not manage users).
	tac.Stop()
	if code, body := send(t, hc, "POST", secure+"/config/NtpServer", "radop", "radius-oper-pass", `{"IpAddr":"192.0.2.46"}`); code != 201 {
		t.Errorf("RADIUS operator POST with TACACS+ down: %d %s", code, body)
	}
	if code, _ := send(t, hc, "POST", secure+"/config/User", "radop", "radius-oper-pass", `{"Name":"bob","Password":"bob-password"}`); code != 403 {
		t.Errorf("RADIUS operator creating a User: %d, want 403", code)
	}
	// Both down: local users, logged.
	rad.Stop()
	if code, body := send(t, hc, "GET", secure+"/config/NtpServers", "admin", blackBoxAdminPassword, ""); code != 200 {
		t.Errorf("local admin with the server down: %d %s", code, body)
	}
	if !strings.Contains(s.logs.String(), "no AAA server answered; checking the local users") {
		t.Errorf("the fallback to local users is not logged")
	}
	if strings.Contains(s.logs.String(), tacKey) {
		t.Errorf("the log holds the key")
	}
}

// TestSyslogCollectorsReceiveLogLines: a plain UDP socket and a plain TCP
// listener as collectors receive swmgr's own log lines (a failed login's
// warning) as RFC 5424 messages: facility local0 with severity warning is
// <132>, version 1, app swmgr; TCP framed by octet counting.
func TestSyslogCollectorsReceiveLogLines(t *testing.T) {
	udp, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer udp.Close()
	tcp, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	tcpLines := make(chan string, 16)
	go func() {
		c, err := tcp.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r := bufio.NewReader(c)
		for {
			n, err := r.ReadString(' ')
			if err != nil {
				return
			}
			size, err := strconv.Atoi(strings.TrimSpace(n))
			if err != nil {
				tcpLines <- "bad frame length " + n
				return
			}
			msg := make([]byte, size)
			if _, err := io.ReadFull(r, msg); err != nil {
				return
			}
			tcpLines <- string(msg)
		}
	}()
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr)
	s.expect(t, 201, "POST", "/config/SyslogCollector", `{"ServerIpAddr":"127.0.0.1","Port":`+strconv.Itoa(udp.LocalAddr().(*net.UDPAddr).Port)+`,"Severity":"warning"}`)
	// The collectors are keyed by address: the TCP one listens on another
	// loopback address.
	s.expect(t, 201, "POST", "/config/SyslogCollector", `{"ServerIpAddr":"127.0.0.2","Port":`+strconv.Itoa(tcp.Addr().(*net.TCPAddr).Port)+`,"Transport":"TCP"}`)
	hc := httpsClient(t, s.dir, "")
	deadline := time.Now().Add(10 * time.Second)
	var gotUDP string
	buf := make([]byte, 4096)
	for gotUDP == "" && time.Now().Before(deadline) {
		send(t, hc, "GET", "https://"+addr+"/public/v1/config/NtpServers", "admin", "not-the-password", "")
		udp.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		for {
			n, _, err := udp.ReadFrom(buf)
			if err != nil {
				break
			}
			if m := string(buf[:n]); strings.Contains(m, "login failed") {
				gotUDP = m
				break
			}
		}
	}
	if !strings.HasPrefix(gotUDP, "<132>1 ") || !strings.Contains(gotUDP, " swmgr ") {
		t.Errorf("UDP collector got %q, want an RFC 5424 <132>1 message from swmgr with the failed login", gotUDP)
	}
	var gotTCP string
	for gotTCP == "" && time.Now().Before(deadline) {
		select {
		case m := <-tcpLines:
			if strings.Contains(m, "login failed") {
				gotTCP = m
			}
		case <-time.After(200 * time.Millisecond):
			send(t, hc, "GET", "https://"+addr+"/public/v1/config/NtpServers", "admin", "not-the-password", "")
		}
	}
	if !strings.HasPrefix(gotTCP, "<132>1 ") {
		t.Errorf("TCP collector got %q", gotTCP)
	}
	st := s.do(t, "GET", "/state/SyslogCollector?ServerIpAddr=127.0.0.1", "")
	if sent, _ := st.object()["Sent"].(float64); sent < 1 {
		t.Errorf("state: %s", st.raw)
	}
}

// TestCLIAAAWords: the CLI's words for the AAA, syslog and DNS kinds come
// from the model: `tacacs server`, `tacacs global`, `radius server`, `aaa`,
// `syslog collector`, `dns server`, `dns global` (AuthOrder, a list, one
// element per command: `no AuthOrder tacacs+` then `AuthOrder tacacs+`
// moves it last); show run replays them
// without the secrets, and the state shows through `show`.
func TestCLIAAAWords(t *testing.T) {
	s := startServer(t, "")
	out, code := runCLI(t, s, "enable\nconfig\ntacacs server 10.0.0.9\nSecret cli-tacacs-key\nPort 4949\nexit\ntacacs global\nEnable true\nexit\n"+
		"radius server 10.0.0.10\nSecret cli-radius-key\nPriority 2\nexit\naaa\nno AuthOrder tacacs+\nAuthOrder tacacs+\nexit\n"+
		"syslog collector 10.0.0.7\nTransport TCP\nexit\ndns server 10.0.0.53\nexit\ndns global\nDomain example.net\nexit\napply\nshow run\nshow dns global\n")
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	mustContain(t, out, "tacacs server 10.0.0.9\n  Secret <secret-not-shown>\n  Port 4949\n", "tacacs global\n  Enable true\n", "radius server 10.0.0.10\n  Secret <secret-not-shown>\n  Priority 2\n",
		"syslog collector 10.0.0.7\n  Transport TCP\n", "dns server 10.0.0.53\n", "dns global\n  Domain example.net\n", "nameserver 10.0.0.53")
	if strings.Contains(out, "cli-tacacs-key") || strings.Contains(out, "cli-radius-key") {
		t.Errorf("the CLI shows a secret:\n%s", out)
	}
	if r := s.do(t, "GET", "/config/AAAGlobal", ""); !strings.Contains(string(r.raw), `"AuthOrder":["radius","tacacs+"]`) {
		t.Errorf("AAAGlobal: %s", r.raw)
	}
	if strings.Contains(s.logs.String(), "cli-tacacs-key") {
		t.Errorf("the log holds a secret")
	}
}

// TestCLICommandsAccounted: every command line remote users run in the
// CLI (one-shot with -c, and piped in as a script: shows, config-mode
// commands, apply, exec actions) reaches tacquito and FreeRADIUS as a
// command record naming the user and the line, with a secret typed on a
// line masked; the records are not in the config log, and the typed
// secret is in no record and not in swmgr's log.
func TestCLICommandsAccounted(t *testing.T) {
	const typed = "cli-typed-key-7"
	tac := aaatest.StartTacacs(t, tacKey, []aaatest.User{
		{Name: "netadmin", Password: "remote-admin-pass", PrivLvl: 15},
		{Name: "viewer", Password: "remote-viewer-pass", PrivLvl: 1},
	})
	rad := aaatest.StartRadius(t, "black-box-radius-secret", nil)
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr)
	s.expect(t, 201, "POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(rad.Port)+`,"AcctPort":`+strconv.Itoa(rad.AcctPort)+`,"Secret":"black-box-radius-secret","Timeout":1,"Retries":0}`)
	s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(tac.Port)+`,"Secret":"`+tacKey+`","AuthService":"login"}`)
	s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":2}`)
	cli := func(user, password, stdin string, args ...string) string {
		cmd := exec.Command(swmgrBin, append([]string{"cli", "--url", "https://" + addr, "--user", user, "--cacert", filepath.Join(s.dir, "tls-cert.pem")}, args...)...)
		cmd.Env = append(os.Environ(), "SWMGR_PASSWORD="+password)
		cmd.Stdin = strings.NewReader(stdin)
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("CLI as %s: %v\n%s", user, err, out)
		}
		return string(out)
	}
	out := cli("netadmin", "remote-admin-pass", "", "-c", "show ntp server; enable; config; tacacs server 192.0.2.77; secret "+typed+"; exit; apply; exit; write memory")
	if strings.Contains(out, "command accounting") {
		t.Errorf("the CLI says a record was not taken:\n%s", out)
	}
	cli("viewer", "remote-viewer-pass", "show version\nshow tacacs server\n")
	want := []struct{ user, line string }{
		{"netadmin", "show ntp server"}, {"netadmin", "enable"}, {"netadmin", "config"},
		{"netadmin", "tacacs server 192.0.2.77"}, {"netadmin", "secret ********"}, {"netadmin", "apply"}, {"netadmin", "write memory"},
		{"viewer", "show version"}, {"viewer", "show tacacs server"},
	}
	deadline := time.Now().Add(15 * time.Second)
	for _, w := range want {
		for !strings.Contains(rad.Accounting(), "shell:cmd="+w.line) && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		tacLine := ""
		for _, l := range strings.Split(tac.Accounting(), "\n") {
			if strings.Contains(l, `"cmd=`+w.line+`"`) {
				tacLine = l
			}
		}
		if !strings.Contains(tacLine, `"`+w.user+`"`) {
			t.Errorf("no TACACS+ record of %q by %s:\n%s", w.line, w.user, tac.Accounting())
		}
		if !strings.Contains(rad.Accounting(), `"shell:cmd=`+w.line+`"`) {
			t.Errorf("no RADIUS record of %q:\n%s", w.line, rad.Accounting())
		}
	}
	if !strings.Contains(rad.Accounting(), `User-Name = "viewer"`) {
		t.Errorf("the RADIUS records do not name viewer")
	}
	for where, text := range map[string]string{"tacquito": tac.Accounting(), "FreeRADIUS": rad.Accounting(), "swmgr's log": s.logs.String(), "the config log": string(s.do(t, "GET", "/state/ConfigLogs", "").raw)} {
		if strings.Contains(text, typed) {
			t.Errorf("%s holds the secret typed on a command line", where)
		}
	}
	if cl := string(s.do(t, "GET", "/state/ConfigLogs", "").raw); strings.Contains(strings.ToLower(cl), "accountcommand") {
		t.Errorf("the command records are in the config log:\n%s", cl)
	}
}

// TestLoginStormLeavesTheLocalAdminIn: with a TACACS+ server that accepts
// and never answers, one address (127.0.0.2) keeps 120 logins under new
// names going at once; meanwhile the local admin logs in, from another
// address and from the storming one, and gets in (after the server's
// timeout, through the local users). The storm's excess is refused with
// 503 naming its address (internal/aaa's TestLoginStormLeavesOthersTheirShare
// counts the share of checks it keeps).
func TestLoginStormLeavesTheLocalAdminIn(t *testing.T) {
	hang := aaatest.StartHanging(t, "127.0.0.1")
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr, "--max-conns-per-client", "512")
	secure := "https://" + addr + "/public/v1"
	s.expect(t, 200, "PATCH", "/config/AAAGlobal", `{"Accounting":false}`)
	s.expect(t, 201, "POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":`+strconv.Itoa(hang.Port)+`,"Secret":"`+tacKey+`"}`)
	s.expect(t, 200, "PATCH", "/config/TacacsGlobal", `{"Enable":"true","Timeout":3}`)

	const stormLogins = 120
	stormClient := unvalidatedHTTPSClient(t, s.dir, "127.0.0.2")
	stormClient.Transport.(*http.Transport).MaxIdleConnsPerHost = stormLogins
	var (
		mu       sync.Mutex
		answers  = map[int]int{}
		refusals []string
	)
	stopStorm := storm(stormLogins, func(i, n int) (*http.Client, *http.Request) {
		req, _ := http.NewRequest("GET", secure+"/config/NtpServers", nil)
		req.SetBasicAuth(fmt.Sprintf("storm%d-%d", i, n), "storm-password")
		return stormClient, req
	}, func(code int, body []byte, err error) {
		mu.Lock()
		defer mu.Unlock()
		answers[code]++
		if code == 503 && len(refusals) < 3 {
			refusals = append(refusals, string(body))
		}
	})
	defer stopStorm()
	// The storm is under way once the server holds checks and some of the
	// storm are refused.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		mu.Lock()
		refused := answers[503]
		mu.Unlock()
		if hang.Conns() > 0 && refused >= stormLogins/2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the storm did not get going: the server holds %d connections, answers %v", hang.Conns(), answers)
		}
	}
	type result struct {
		from string
		code int
		body string
	}
	results := make(chan result, 2)
	for _, from := range []string{"127.0.0.1", "127.0.0.2"} {
		go func() {
			code, body := send(t, unvalidatedHTTPSClient(t, s.dir, from), "GET", secure+"/config/NtpServers", "admin", blackBoxAdminPassword, "")
			results <- result{from, code, body}
		}()
	}
	for range 2 {
		r := <-results
		if r.code != 200 {
			t.Errorf("the local admin from %s during the storm: %d %s", r.from, r.code, r.body)
		}
	}
	stopStorm()
	if answers[503] == 0 || len(refusals) == 0 || !strings.Contains(refusals[0], "127.0.0.2") {
		t.Errorf("the storm's answers %v; its refusals %q do not name its address", answers, refusals)
	}
	t.Logf("the storm's answers: %v; the server held %d connections in all", answers, hang.Conns())
}
