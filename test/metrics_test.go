package test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// trafficServer is a swmgr with something to measure: a port up (the
// simulated switch counts traffic on it), a BGP session, an NTP source, a
// DHCP relay and a few commits.
func trafficServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t, "")
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/30"}`},
		{"PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`},
		{"POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.2","PeerAS":"65002"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`},
		{"PATCH", "/config/DhcpRelayGlobal", `{"Enable":true}`},
		{"POST", "/config/DhcpRelayIntf", `{"IntfRef":"fpPort1","ServerIp":["192.0.2.67"]}`},
		{"POST", "/config/LaPortChannel", `{"IntfRef":"PortChannel1","IntfRefList":["fpPort2"]}`},
	} {
		if r := s.do(t, c.method, c.path, c.body); r.code >= 300 {
			t.Fatalf("%s %s: %s", c.method, c.path, r)
		}
	}
	return s
}

func scrape(t *testing.T, s *server) []byte {
	t.Helper()
	resp, err := http.Get("http://" + s.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("/metrics: %d %s", resp.StatusCode, b)
	}
	return b
}

// TestMetricsFollowConventions: promtool (Prometheus's own linter) finds
// nothing to say about /metrics; the series of ports, BGP sessions, NTP
// sources and the confirmation state are there under their documented
// names, with HELP derived from the model.
func TestMetricsFollowConventions(t *testing.T) {
	needTool(t, "promtool")
	s := trafficServer(t)
	text := scrape(t, s)
	cmd := exec.Command("promtool", "check", "metrics")
	cmd.Stdin = bytes.NewReader(text)
	if out, err := cmd.CombinedOutput(); err != nil || len(bytes.TrimSpace(out)) > 0 {
		t.Errorf("promtool check metrics: %v\n%s", err, out)
	}
	for _, want := range []string{
		"# TYPE swmgr_port_receive_bytes_total counter",
		"# HELP swmgr_port_receive_bytes_total Front-panel port: bytes received (PortState IfInOctets).",
		`swmgr_port_receive_bytes_total{port="fpPort1"}`,
		`swmgr_port_up{port="fpPort1"} 1`,
		`swmgr_port_speed_bytes{port="fpPort1"} 5e+09`,
		"# HELP swmgr_bgp_peer_state BGP session: RFC 4271 FSM state: 1 Idle .. 6 Established (0 Resolving, 1 Idle, 2 Connect, 3 Active, 4 OpenSent, 5 OpenConfirm, 6 Established) (BGPv4NeighborState SessionState).",
		`swmgr_bgp_peer_state{peer="10.1.1.2",peer_as="65002",vrf="default"} 1`,
		`swmgr_bgp_peer_messages_received_update_total{peer="10.1.1.2",peer_as="65002",vrf="default"} 0`,
		`swmgr_bgp_peer_prefixes_received{`,
		`swmgr_bgp_peer_prefixes_received_pre_policy{peer="10.1.1.2",peer_as="65002",vrf="default"} 0`,
		`swmgr_bgp_peer_prefixes_installed{peer="10.1.1.2",peer_as="65002",vrf="default"} 0`,
		`swmgr_ntp_source_stratum{source="192.0.2.10"} 16`,
		`swmgr_ntp_source_offset_seconds{source="192.0.2.10"}`,
		"swmgr_commit_confirm_pending 0",
		"# HELP swmgr_dhcp_relay_client_requests_total DHCP relay interface: DHCP requests received from clients (DhcpRelayIntfState TotalDhcpClientRx).",
		`swmgr_dhcp_relay_client_requests_total{interface="fpPort1"} 0`,
		"# HELP swmgr_lag_members_up Link aggregation group: the members collecting and distributing, counted (LaPortChannelState IntfRefListUpInBundle).",
		"# TYPE swmgr_lag_members_up gauge",
		`swmgr_lag_members_up{lag="PortChannel1"} 0`,
		`swmgr_lag_up{lag="PortChannel1"} 0`,
		`swmgr_lag_member_up{lag="PortChannel1",port="fpPort2"} 0`,
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestGrafanaDashboardQueries: the example dashboard
// (docs/grafana/swmgr-dashboard.json) works for a fleet. A real Prometheus
// scrapes three swmgr with traffic, each with a TACACS+ and a RADIUS
// server configured that do not answer: each sends its accounting to the
// RADIUS server and counts unanswered attempts and dropped records; the
// third enables TACACS+ too, so its TACACS+ server counts them as well. With
// the job and instance variables at All, every query of every panel
// returns series of each switch, each labelled with its instance: a query
// that adds the switches together fails. With instance set to one switch,
// every query returns that switch's series only.
//
// go test -run TestGrafanaDashboardQueries ./test/ -dashboard-picture
// also draws the latest values into docs/grafana/swmgr-dashboard.svg.
func TestGrafanaDashboardQueries(t *testing.T) {
	needTool(t, "prometheus")
	dash := readDashboard(t, "../docs/grafana/swmgr-dashboard.json")
	for _, v := range []string{"job", "instance"} {
		if q, ok := dash.variables[v]; !ok || !strings.HasPrefix(q, "label_values(") {
			t.Errorf("the dashboard has no %s variable of label_values (%q)", v, q)
		}
	}
	if len(dash.queries()) < 20 {
		t.Fatalf("the dashboard has %d queries", len(dash.queries()))
	}

	var fleet []*server
	var targets []string
	for i := 0; i < 3; i++ {
		s := trafficServer(t)
		for _, c := range []struct{ method, path, body string }{
			{"POST", "/config/Tacacs", `{"ServerIp":"127.0.0.1","Port":` + port(t, freeAddr(t)) + `,"Secret":"fleet-tacacs-key"}`},
			{"POST", "/config/RadiusServer", `{"ServerIp":"127.0.0.1","Port":` + port(t, freeAddr(t)) + `,"AcctPort":` + port(t, freeAddr(t)) + `,"Secret":"fleet-radius-key"}`},
		} {
			if r := s.do(t, c.method, c.path, c.body); r.code >= 300 {
				t.Fatalf("%s %s: %s", c.method, c.path, r)
			}
		}
		fleet = append(fleet, s)
		targets = append(targets, "'"+s.addr+"'")
	}
	// Logins fall back to the local users when no server answers.
	if r := fleet[2].do(t, "PATCH", "/config/TacacsGlobal", `{"Enable":"true"}`); r.code >= 300 {
		t.Fatalf("TacacsGlobal: %s", r)
	}
	prom := promAPI(startPrometheus(t, fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: swmgr\n    static_configs:\n      - targets: [%s]\n", strings.Join(targets, ", "))))

	all := map[string]string{"job": ".*", "instance": ".*"}
	var instances []string
	for _, s := range fleet {
		instances = append(instances, s.addr)
	}
	// Rates need two scrapes in their window: wait until every query has
	// series of every switch (a few seconds at a 1 s scrape interval), some
	// traffic and a commit meanwhile.
	deadline := time.Now().Add(90 * time.Second)
	var results [][]promSeries
	for {
		for _, s := range fleet {
			s.do(t, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","Description":"traffic `+time.Now().Format("150405.000")+`"}`)
		}
		var wrong []string
		results = results[:0]
		for _, e := range dash.queries() {
			series, err := prom.query(dash.expand(e, all))
			results = append(results, series)
			if msg := perInstance(series, err, instances); msg != "" {
				wrong = append(wrong, e+": "+msg)
			}
			for _, s := range series {
				if _, ok := s.Metric["instance"]; !ok {
					t.Fatalf("%s: a series without an instance label, added across switches: %v", e, s.Metric)
				}
			}
		}
		if len(wrong) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("queries without series of each switch:\n%s", strings.Join(wrong, "\n"))
		}
		time.Sleep(time.Second)
	}
	// Grafana puts a selected value into a regex matcher escaped twice: as
	// a regex, then as a PromQL string.
	one := map[string]string{"job": "swmgr", "instance": strings.ReplaceAll(regexp.QuoteMeta(fleet[1].addr), `\`, `\\`)}
	for _, e := range dash.queries() {
		series, err := prom.query(dash.expand(e, one))
		if msg := perInstance(series, err, instances[1:2]); msg != "" {
			t.Errorf("%s with instance %s: %s", e, fleet[1].addr, msg)
		}
	}
	if *dashboardPicture {
		if err := os.WriteFile("../docs/grafana/swmgr-dashboard.svg", dash.picture(results, instances), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// perInstance says what is wrong with a query's result ("" when nothing):
// it must have series of each of instances and of no other, each labelled
// with its instance.
func perInstance(series []promSeries, err error, instances []string) string {
	if err != nil {
		return err.Error()
	}
	seen := map[string]bool{}
	for _, s := range series {
		in, ok := s.Metric["instance"]
		if !ok {
			return fmt.Sprintf("a series without an instance label (added across switches?): %v", s.Metric)
		}
		seen[in] = true
	}
	var missing []string
	for _, in := range instances {
		if !seen[in] {
			missing = append(missing, in)
		}
		delete(seen, in)
	}
	if len(missing) > 0 || len(seen) > 0 {
		return fmt.Sprintf("%d series; no series of %v; series of other switches %v", len(series), missing, seen)
	}
	return ""
}

// port is the port of the address host:port.
func port(t *testing.T, addr string) string {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// startPrometheus runs Prometheus with the configuration conf until the
// test ends, and returns the address of its web API.
func startPrometheus(t *testing.T, conf string) string {
	t.Helper()
	dir := t.TempDir()
	file := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(file, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	prom := exec.Command("prometheus", "--config.file="+file, "--storage.tsdb.path="+filepath.Join(dir, "data"), "--web.listen-address="+addr)
	var logs syncBuffer
	prom.Stdout, prom.Stderr = &logs, &logs
	if err := prom.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		prom.Process.Kill()
		prom.Wait()
		if t.Failed() {
			t.Logf("prometheus logged:\n%s", tail(logs.String(), 3000))
		}
	})
	return addr
}
