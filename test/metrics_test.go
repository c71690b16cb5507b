package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// trafficServer is a swmgr with something to measure: a port up (the
// simulated switch counts traffic on it), a BGP session, an NTP source and
// a few commits.
func trafficServer(t *testing.T) *server {
	t.Helper()
	s := startServer(t, "")
	for _, c := range []struct{ method, path, body string }{
		{"PATCH", "/config/Port", `{"IntfRef":"fpPort1","AdminState":"UP"}`},
		{"POST", "/config/IPv4Intf", `{"IntfRef":"fpPort1","IpAddr":"10.1.1.1/30"}`},
		{"PATCH", "/config/BGPGlobal", `{"ASNum":"65001","RouterId":"10.0.0.1"}`},
		{"POST", "/config/BGPv4Neighbor", `{"NeighborAddress":"10.1.1.2","PeerAS":"65002"}`},
		{"POST", "/config/NtpServer", `{"IpAddr":"192.0.2.10"}`},
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
		`swmgr_ntp_source_stratum{source="192.0.2.10"} 16`,
		`swmgr_ntp_source_offset_seconds{source="192.0.2.10"}`,
		"swmgr_commit_confirm_pending 0",
	} {
		if !bytes.Contains(text, []byte(want)) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
}

// TestGrafanaDashboardQueries: every query of the example dashboard
// (docs/grafana/swmgr-dashboard.json) returns series from a real Prometheus
// scraping a swmgr with traffic.
func TestGrafanaDashboardQueries(t *testing.T) {
	needTool(t, "prometheus")
	data, err := os.ReadFile("../docs/grafana/swmgr-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(data, &dash); err != nil {
		t.Fatal(err)
	}
	s := trafficServer(t)
	addr := startPrometheus(t, fmt.Sprintf("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: swmgr\n    static_configs:\n      - targets: ['%s']\n", s.addr))
	query := func(expr string) (int, error) {
		resp, err := http.Get("http://" + addr + "/api/v1/query?query=" + url.QueryEscape(expr))
		if err != nil {
			return 0, err
		}
		defer resp.Body.Close()
		var r struct {
			Status string
			Error  string
			Data   struct{ Result []any }
		}
		if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
			return 0, err
		}
		if r.Status != "success" {
			return 0, fmt.Errorf("%s", r.Error)
		}
		return len(r.Data.Result), nil
	}
	var exprs []string
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			exprs = append(exprs, tg.Expr)
		}
	}
	if len(exprs) < 10 {
		t.Fatalf("the dashboard has %d queries", len(exprs))
	}
	// Rates need two scrapes in their window: wait until every query has
	// series (a few seconds at a 1 s scrape interval), some traffic and a
	// commit meanwhile.
	deadline := time.Now().Add(60 * time.Second)
	for {
		s.do(t, "PATCH", "/config/Port", `{"IntfRef":"fpPort2","Description":"traffic `+time.Now().Format("150405.000")+`"}`)
		var empty []string
		for _, e := range exprs {
			if n, err := query(e); err != nil || n == 0 {
				empty = append(empty, fmt.Sprintf("%s (%d series, %v)", e, n, err))
			}
		}
		if len(empty) == 0 {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("queries without series:\n%s", strings.Join(empty, "\n"))
		}
		time.Sleep(time.Second)
	}
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
