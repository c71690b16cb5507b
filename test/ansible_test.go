package test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// The Ansible collection swmgr.switch, built and installed with Debian's
// ansible-core, driving real swmgr servers on loopback (plain HTTP on
// loopback: the test runs as root, an admin).

// needAnsible skips without Debian's ansible-core, except in CI, where
// .ci/run installs it.
func needAnsible(t *testing.T) {
	t.Helper()
	for _, tool := range []string{"ansible-playbook", "ansible-galaxy"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (package ansible-core; .ci/run installs it)", tool)
			}
			t.Skipf("%s is not installed: apt-get install ansible-core", tool)
		}
	}
}

// ansibleEnv builds the collection from the tree and installs it into a
// temporary directory; it returns the environment that finds it.
// A directory named by envAnsibleDir has the collection built and
// installed already by ansibleEnv (TestFabricInVM builds it on the host
// for the tests it runs in the VM, where the build takes most of a
// minute of the emulated CPU).
func ansibleEnv(t *testing.T) []string {
	t.Helper()
	needAnsible(t)
	if dir := os.Getenv(envAnsibleDir); dir != "" {
		return ansibleEnvIn(dir)
	}
	dir := t.TempDir()
	src, err := filepath.Abs("../ansible/ansible_collections/swmgr/switch")
	if err != nil {
		t.Fatal(err)
	}
	callbacks := filepath.Join(dir, "callbacks")
	if err := os.MkdirAll(callbacks, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(callbacks, "testjson.py"), []byte(jsonCallback), 0o644); err != nil {
		t.Fatal(err)
	}
	env := ansibleEnvIn(dir)
	build := exec.Command("ansible-galaxy", "collection", "build", "--force", "--output-path", dir, src)
	build.Env = env
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("ansible-galaxy collection build: %v\n%s", err, out)
	}
	install := exec.Command("ansible-galaxy", "collection", "install", "--force", "-p", filepath.Join(dir, "collections"), filepath.Join(dir, "swmgr-switch-1.0.0.tar.gz"))
	install.Env = env
	if out, err := install.CombinedOutput(); err != nil {
		t.Fatalf("ansible-galaxy collection install: %v\n%s", err, out)
	}
	return append(env, envAnsibleDir+"="+dir)
}

// envAnsibleDir names the directory where ansibleEnv built and installed
// the collection.
const envAnsibleDir = "SWMGR_ANSIBLE_DIR"

// ansibleEnvIn is the environment of ansible-playbook with the collection
// and the test's callback in dir.
func ansibleEnvIn(dir string) []string {
	return append(os.Environ(), "ANSIBLE_NOCOLOR=1", "ANSIBLE_LOCAL_TEMP="+filepath.Join(dir, "tmp"), "ANSIBLE_COLLECTIONS_PATH="+filepath.Join(dir, "collections"),
		"ANSIBLE_CALLBACK_PLUGINS="+filepath.Join(dir, "callbacks"), "ANSIBLE_STDOUT_CALLBACK=testjson", "ANSIBLE_PYTHON_INTERPRETER=/usr/bin/python3",
		"ANSIBLE_DEPRECATION_WARNINGS=0", "ANSIBLE_RETRY_FILES_ENABLED=0")
}

// jsonCallback is a stdout callback that prints the whole run as one JSON
// document at its end, as ansible.posix's json callback does (ansible-core
// alone has none).
const jsonCallback = `from __future__ import absolute_import, division, print_function
__metaclass__ = type
import json
from ansible.plugins.callback import CallbackBase


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = 'stdout'
    CALLBACK_NAME = 'testjson'

    def __init__(self):
        super(CallbackModule, self).__init__()
        self.plays = []

    def v2_playbook_on_play_start(self, play):
        self.plays.append({'play': {'name': play.get_name()}, 'tasks': []})

    def v2_playbook_on_task_start(self, task, is_conditional):
        self.plays[-1]['tasks'].append({'task': {'name': task.get_name()}, 'hosts': {}})

    def _result(self, result, **extra):
        r = dict(result._result)
        r.update(extra)
        name = result._task.get_name()
        for t in reversed(self.plays[-1]['tasks']):
            if t['task']['name'] == name:
                t['hosts'][result._host.get_name()] = r
                return
        self.plays[-1]['tasks'].append({'task': {'name': name}, 'hosts': {result._host.get_name(): r}})

    def v2_runner_on_ok(self, result, **kw):
        self._result(result)

    def v2_runner_on_failed(self, result, ignore_errors=False, **kw):
        self._result(result, failed=True, ignore_errors=ignore_errors)

    def v2_runner_on_skipped(self, result, **kw):
        self._result(result, skipped=True)

    def v2_runner_on_unreachable(self, result, **kw):
        self._result(result, unreachable=True)

    def v2_playbook_on_stats(self, stats):
        out = {}
        for h in sorted(stats.processed):
            s = stats.summarize(h)
            out[h] = dict(Changed=s['changed'], Failures=s['failures'], Ok=s['ok'], Unreachable=s['unreachable'], Rescued=s['rescued'])
        self._display.display(json.dumps({'plays': self.plays, 'stats': out}, default=str))
`

// playResult is what the test's JSON callback reports.
type playResult struct {
	Stats map[string]struct{ Changed, Failures, Ok, Unreachable, Rescued int } `json:"stats"`
	Plays []struct {
		Play  struct{ Name string } `json:"play"`
		Tasks []struct {
			Task  struct{ Name string }     `json:"task"`
			Hosts map[string]map[string]any `json:"hosts"`
		} `json:"tasks"`
	} `json:"plays"`
	raw string
}

// failures lists the messages of the tasks that failed (and were not
// ignored), per host.
func (r playResult) failures() []string {
	var out []string
	for _, p := range r.Plays {
		for _, task := range p.Tasks {
			for h, res := range task.Hosts {
				if res["failed"] == true && res["ignore_errors"] != true {
					out = append(out, fmt.Sprintf("%s %s: %v", h, task.Task.Name, res["msg"]))
				}
			}
		}
	}
	return out
}

// task returns one host's result of the task named name.
func (r playResult) task(name, host string) map[string]any {
	for _, p := range r.Plays {
		for _, task := range p.Tasks {
			if task.Task.Name == name || strings.HasSuffix(task.Task.Name, " : "+name) {
				return task.Hosts[host]
			}
		}
	}
	return nil
}

func (r playResult) changed() (n int) {
	for _, s := range r.Stats {
		n += s.Changed
	}
	return n
}

// runPlaybook writes the inventory and the playbook and runs it; extra are
// more ansible-playbook arguments.
func runPlaybook(t *testing.T, env []string, inventory, playbook string, extra ...string) playResult {
	t.Helper()
	dir := t.TempDir()
	inv, play := filepath.Join(dir, "inventory.yml"), filepath.Join(dir, "play.yml")
	if err := os.WriteFile(inv, []byte(inventory), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(play, []byte(playbook), 0o600); err != nil {
		t.Fatal(err)
	}
	if strings.HasPrefix(playbook, "swmgr.switch.") {
		play = playbook
	}
	cmd := exec.Command("ansible-playbook", append([]string{"-i", inv, play}, extra...)...)
	cmd.Env = env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var r playResult
	if jerr := json.Unmarshal(stdout.Bytes(), &r); jerr != nil {
		t.Fatalf("ansible-playbook (%v): no JSON result: %v\nstdout:\n%s\nstderr:\n%s", err, jerr, tail(stdout.String(), 3000), tail(stderr.String(), 3000))
	}
	r.raw = stdout.String()
	return r
}

// inventoryOf is an inventory of servers named sw1, sw2, ... in the group
// switches, reached over loopback plain HTTP.
func inventoryOf(servers ...*server) string {
	var b strings.Builder
	b.WriteString("all:\n  children:\n    switches:\n      hosts:\n")
	for i, s := range servers {
		fmt.Fprintf(&b, "        sw%d: {swmgr_connection: {url: \"http://%s\"}}\n", i+1, s.addr)
	}
	b.WriteString("      vars:\n        ansible_connection: local\n")
	return b.String()
}

const playHeader = `- hosts: switches
  gather_facts: false
  module_defaults:
    group/swmgr.switch.swmgr: "{{ swmgr_connection }}"
  tasks:
`

func runningRevisionOf(t *testing.T, s *server) int {
	t.Helper()
	r := s.expect(t, 200, "GET", "/revisions?Count=1", "")
	objs, _ := r.body["Objects"].([]any)
	if len(objs) == 0 {
		t.Fatalf("no revisions: %s", r.raw)
	}
	return int(objs[0].(map[string]any)["Object"].(map[string]any)["Revision"].(float64))
}

func TestAnsibleResourceModules(t *testing.T) {
	env := ansibleEnv(t)
	s := startServer(t, "")
	inv := inventoryOf(s)

	// Idempotency: the second run of the same playbook changes nothing and
	// makes no revision.
	play := playHeader + `    - name: ntp
      swmgr.switch.swmgr_ntp_server:
        config:
          - {ip_addr: 192.0.2.10, min_poll: 4}
          - {ip_addr: 192.0.2.11}
    - name: vrf
      swmgr.switch.swmgr_vrf:
        config: [{vrf: red}]
    - name: address
      swmgr.switch.swmgr_ipv4_intf:
        config: [{intf_ref: fpPort1, ip_addr: 10.1.1.1/30}]
    - name: vlan
      swmgr.switch.swmgr_vlan:
        state: replaced
        config: [{vlan_id: 100, untag_intf_list: [fpPort2, fpPort3]}]
    - name: port
      swmgr.switch.swmgr_port:
        config: [{intf_ref: fpPort4, mtu: 9000, admin_state: UP}]
    - name: system
      swmgr.switch.swmgr_system_param:
        config: {description: lab switch}
    - name: user
      swmgr.switch.swmgr_user:
        config: [{name: ops1, group: operator, password: a-long-password-1}]
    - name: several kinds in one commit
      swmgr.switch.swmgr_config:
        comment: static route and a neighbor
        resources:
          - kind: IPv4Route
            config: [{destination_nw: 10.9.0.0, network_mask: 255.255.0.0, next_hop: [{next_hop_ip: 10.1.1.2}]}]
`
	before := runningRevisionOf(t, s)
	r := runPlaybook(t, env, inv, play)
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("first run failed: %v", f)
	}
	if got := r.changed(); got != 8 {
		t.Errorf("first run: changed=%d; want 8", got)
	}
	first := runningRevisionOf(t, s)
	if first-before != 8 {
		t.Errorf("first run made %d revisions; want 8 (one per task)", first-before)
	}
	rev := s.expect(t, 200, "GET", fmt.Sprintf("/revisions/%d", first), "")
	if rev.body["Source"] != "ansible" || rev.body["Comment"] != "static route and a neighbor" {
		t.Errorf("the last revision: source %v, comment %v; want ansible, the task's comment", rev.body["Source"], rev.body["Comment"])
	}
	r = runPlaybook(t, env, inv, play)
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("second run failed: %v", f)
	}
	if got := r.changed(); got != 0 {
		t.Errorf("second run: changed=%d; want 0\n%s", got, tail(r.raw, 3000))
	}
	if got := runningRevisionOf(t, s); got != first {
		t.Errorf("the second run made revisions: %d -> %d", first, got)
	}

	// Check mode is the server's dry run: it changes nothing, says what
	// would change, and reports what the switch would refuse.
	check := playHeader + `    - name: would change
      swmgr.switch.swmgr_ntp_server:
        config: [{ip_addr: 192.0.2.12}]
      register: would
    - name: would be refused
      swmgr.switch.swmgr_ntp_server:
        config: [{ip_addr: 192.0.2.13, min_poll: 3}]
      ignore_errors: true
`
	r = runPlaybook(t, env, inv, check, "--check", "--diff")
	if got := runningRevisionOf(t, s); got != first {
		t.Errorf("--check made revisions: %d -> %d", first, got)
	}
	if w := r.task("would change", "sw1"); w["changed"] != true || !strings.Contains(fmt.Sprint(w["diff"]), "192.0.2.12") {
		t.Errorf("--check of a change: %v", w)
	}
	if w := r.task("would be refused", "sw1"); w["failed"] != true || !strings.Contains(fmt.Sprint(w["msg"]), "MinPoll: 3 is out of range") {
		t.Errorf("--check of a bad value: %v", w)
	}
	if len(s.listAll(t, "/config/NtpServers", 100)) != 2 {
		t.Error("--check changed the NtpServers")
	}

	// overridden on a kind with extra objects: exactly one revision, and
	// exactly the objects given.
	for _, ip := range []string{"192.0.2.20", "192.0.2.21"} {
		s.expect(t, 201, "POST", "/config/NtpServer", `{"IpAddr":"`+ip+`"}`)
	}
	before = runningRevisionOf(t, s)
	r = runPlaybook(t, env, inv, playHeader+`    - name: override
      swmgr.switch.swmgr_ntp_server:
        state: overridden
        config: [{ip_addr: 192.0.2.10, min_poll: 4}, {ip_addr: 192.0.2.30}]
`)
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("overridden failed: %v", f)
	}
	if got := runningRevisionOf(t, s); got != before+1 {
		t.Errorf("overridden made %d revisions; want 1", got-before)
	}
	var ips []string
	for _, o := range s.listAll(t, "/config/NtpServers", 100) {
		ips = append(ips, o["Object"].(map[string]any)["IpAddr"].(string))
	}
	if strings.Join(ips, " ") != "192.0.2.10 192.0.2.30" {
		t.Errorf("NtpServers after overridden: %v", ips)
	}

	// A task with one invalid object leaves the store byte-identical.
	s.stop(t)
	want := dump(t, s.dir)
	s = startServer(t, s.dir)
	r = runPlaybook(t, env, inventoryOf(s), playHeader+`    - name: one bad of three
      swmgr.switch.swmgr_vlan:
        state: overridden
        config: [{vlan_id: 200}, {vlan_id: 201, untag_intf_list: [fpPort9]}, {vlan_id: 5000}]
      ignore_errors: true
      register: bad
`)
	if b := r.task("one bad of three", "sw1"); b["failed"] != true || !strings.Contains(fmt.Sprint(b["msg"]), "VlanId") {
		t.Errorf("a task with a bad VlanId: %v", b)
	}
	s.stop(t)
	if got := dump(t, s.dir); !bytes.Equal(got, want) {
		t.Error("a refused task changed the store")
	}
}

// The fleet role on five switches: a change that passes its checks
// everywhere is confirmed everywhere; a check failing on one switch
// confirms none, and every switch rolls back by itself, including one that
// was stopped meanwhile (at its restart).
func TestAnsibleFleetChange(t *testing.T) {
	env := ansibleEnv(t)
	servers := make([]*server, 5)
	for i := range servers {
		servers[i] = startServer(t, "")
	}
	inv := inventoryOf(servers...)
	checks := filepath.Join(t.TempDir(), "checks.yml")
	if err := os.WriteFile(checks, []byte(`- name: read the ports
  swmgr.switch.swmgr_facts:
    kinds: []
    state: [Port]
- name: fpPort1 is up, and this is not the switch told to fail
  ansible.builtin.assert:
    that:
      - (swmgr_state.Port | selectattr('IntfRef', 'eq', 'fpPort1') | first).OperState == 'UP'
      - inventory_hostname != (fleet_fail_on | default(''))
`), 0o600); err != nil {
		t.Fatal(err)
	}
	change := func(ntp string, confirm int) string {
		return fmt.Sprintf(`{"fleet_comment": "fleet ntp", "fleet_confirm_seconds": %d, "fleet_checks_file": %q,
 "fleet_resources": [{"kind": "NtpServer", "state": "overridden", "config": [{"ip_addr": %q}]},
                     {"kind": "Port", "config": [{"intf_ref": "fpPort1", "admin_state": "UP"}]}]}`, confirm, checks, ntp)
	}
	ntpOf := func(s *server) string {
		var ips []string
		for _, o := range s.listAll(t, "/config/NtpServers", 100) {
			ips = append(ips, o["Object"].(map[string]any)["IpAddr"].(string))
		}
		return strings.Join(ips, " ")
	}

	r := runPlaybook(t, env, inv, "swmgr.switch.fleet_change", "-e", change("192.0.2.10", 600))
	if f := r.failures(); len(f) > 0 {
		t.Fatalf("the fleet change failed: %v\n%s", f, tail(r.raw, 4000))
	}
	for i, s := range servers {
		if p := s.expect(t, 200, "GET", "/revisions/pending", ""); p.body["Awaiting"] != false {
			t.Errorf("sw%d: still awaiting confirmation: %s", i+1, p.raw)
		}
		if got := ntpOf(s); got != "192.0.2.10" {
			t.Errorf("sw%d: NtpServers %q after a confirmed change", i+1, got)
		}
	}

	// sw3's checks fail: nobody confirms. sw5 is stopped as soon as it has
	// committed, and started again after its deadline.
	const confirm = 20
	stopped := make(chan time.Time, 1)
	go func() {
		for deadline := time.Now().Add(3 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			p, err := servers[4].call("GET", "/revisions/pending", "")
			if err == nil && p.body["Awaiting"] == true {
				by, _ := time.Parse(time.RFC3339, p.str("ConfirmBy"))
				servers[4].terminate()
				stopped <- by
				return
			}
		}
		close(stopped)
	}()
	r = runPlaybook(t, env, inv, "swmgr.switch.fleet_change", "-e", change("192.0.2.99", confirm), "-e", "fleet_fail_on=sw3")
	if r.Stats["sw3"].Rescued != 1 {
		t.Errorf("sw3's failed check was not recorded: %+v", r.Stats["sw3"])
	}
	report := r.task("Report", "sw1")
	// sw5, stopped meanwhile, fails its checks too.
	if msg := fmt.Sprint(report["msg"]); !strings.Contains(msg, "not confirmed (") || !strings.Contains(msg, "sw3") {
		t.Errorf("sw1's report: %v", report["msg"])
	}
	by, ok := <-stopped
	if !ok {
		t.Fatal("sw5 never committed the change")
	}
	time.Sleep(time.Until(by) + 2*time.Second)
	servers[4] = startServer(t, servers[4].dir)
	for i, s := range servers {
		var got string
		for wait := time.Now().Add(30 * time.Second); time.Now().Before(wait); time.Sleep(200 * time.Millisecond) {
			if got = ntpOf(s); got == "192.0.2.10" {
				break
			}
		}
		if got != "192.0.2.10" {
			t.Errorf("sw%d: NtpServers %q after the deadline; want the previous 192.0.2.10", i+1, got)
		}
		if p := s.expect(t, 200, "GET", "/revisions/pending", ""); p.body["Awaiting"] != false {
			t.Errorf("sw%d: still awaiting: %s", i+1, p.raw)
		}
		// The change was committed, then rolled back by the switch itself
		// (the check runs after the deadline: how long the playbook took
		// does not matter).
		newest := s.expect(t, 200, "GET", fmt.Sprintf("/revisions/%d", runningRevisionOf(t, s)), "")
		committed := s.expect(t, 200, "GET", fmt.Sprintf("/revisions/%d", runningRevisionOf(t, s)-1), "")
		if newest.body["Source"] != "confirm-timeout" || committed.body["Comment"] != "fleet ntp" || !strings.Contains(string(committed.raw), "192.0.2.99") {
			t.Errorf("sw%d: the last two revisions: %.300s\n%.300s; want the fleet's commit of 192.0.2.99, then its rollback by confirm-timeout", i+1, committed.raw, newest.raw)
		}
	}
}

// The collection passes ansible-lint (production profile), ansible-doc
// reads every module's documentation, and ansible-test's sanity tests that
// need no download from PyPI pass (import, validate-modules, pep8, pylint
// and yamllint install their requirements from PyPI, which this network
// does not reach).
func TestAnsibleCollectionLint(t *testing.T) {
	env := ansibleEnv(t)
	for _, tool := range []string{"ansible-lint", "ansible-doc", "ansible-test"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is not installed (packages ansible-core, ansible-lint; .ci/run installs them)", tool)
			}
			t.Skipf("%s is not installed: apt-get install ansible-core ansible-lint", tool)
		}
	}
	src, err := filepath.Abs("../ansible/ansible_collections/swmgr/switch")
	if err != nil {
		t.Fatal(err)
	}
	run := func(dir string, argv ...string) {
		t.Helper()
		cmd := exec.Command(argv[0], argv[1:]...)
		cmd.Dir, cmd.Env = dir, env
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("%s: %v\n%s", strings.Join(argv, " "), err, tail(string(out), 3000))
		}
	}
	run(src, "ansible-lint", "--offline", "--nocolor", "-p", "roles", "playbooks")
	mods, err := filepath.Glob(filepath.Join(src, "plugins", "modules", "*.py"))
	if err != nil || len(mods) == 0 {
		t.Fatalf("no modules: %v", err)
	}
	doc := []string{"ansible-doc", "-t", "module"}
	for _, m := range mods {
		doc = append(doc, "swmgr.switch."+strings.TrimSuffix(filepath.Base(m), ".py"))
	}
	run(src, doc...)
	args := []string{"ansible-test", "sanity", "--local", "--python", "3.11"}
	for _, needsPyPI := range []string{"ansible-doc", "import", "validate-modules", "yamllint", "pep8", "pylint", "runtime-metadata", "changelog"} {
		args = append(args, "--skip-test", needsPyPI)
	}
	run(src, args...)
}

// Over HTTPS as a User: a pinned fingerprint or the switch's certificate as
// the CA; a wrong pin fails before any credential is sent, a wrong password
// is swmgr's 401; the commit is recorded as the User's.
func TestAnsibleOverHTTPS(t *testing.T) {
	env := ansibleEnv(t)
	addr := freeAddr(t)
	s := startServer(t, "", "--https", addr)
	cert := filepath.Join(s.dir, "tls-cert.pem")
	pemBytes, err := os.ReadFile(cert)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(pemBytes)
	sum := sha256.Sum256(block.Bytes)
	pin := hex.EncodeToString(sum[:])
	wrongPin := strings.Repeat("ab", 32)
	inv := fmt.Sprintf(`all:
  children:
    switches:
      vars: {ansible_connection: local}
      hosts:
        pinned: {swmgr_connection: {url: "https://%[1]s", user: admin, password: black-box-admin-password, fingerprint: "%[2]s"}}
        ca: {swmgr_connection: {url: "https://%[1]s", user: admin, password: black-box-admin-password, ca_path: "%[3]s"}}
        wrongpin: {swmgr_connection: {url: "https://%[1]s", user: admin, password: black-box-admin-password, fingerprint: "%[4]s"}}
        wrongpw: {swmgr_connection: {url: "https://%[1]s", user: admin, password: not-the-password, fingerprint: "%[2]s"}}
        plain: {swmgr_connection: {url: "http://192.0.2.1:8080", user: admin, password: black-box-admin-password}}
`, addr, pin, cert, wrongPin)
	r := runPlaybook(t, env, inv, playHeader+`    - name: ntp
      swmgr.switch.swmgr_ntp_server:
        config: [{ip_addr: "192.0.2.{{ 40 + groups.switches.index(inventory_hostname) }}"}]
`)
	for host, want := range map[string]string{"pinned": "", "ca": "", "wrongpin": "nothing was sent", "wrongpw": "", "plain": "in clear"} {
		res := r.task("ntp", host)
		switch {
		case want == "" && host != "wrongpw" && res["failed"] == true:
			t.Errorf("%s: %v", host, res["msg"])
		case want != "" && (res["failed"] != true || !strings.Contains(fmt.Sprint(res["msg"]), want)):
			t.Errorf("%s: %v; want a failure saying %q", host, res, want)
		}
	}
	if res := r.task("ntp", "wrongpw"); res["failed"] != true || res["status"] != float64(401) {
		t.Errorf("a wrong password: %v; want swmgr's 401", res)
	}
	if got := len(s.listAll(t, "/config/NtpServers", 100)); got != 2 {
		t.Errorf("%d NtpServers; want the two of the hosts that got through", got)
	}
	rev := s.expect(t, 200, "GET", fmt.Sprintf("/revisions/%d", runningRevisionOf(t, s)), "")
	if rev.body["User"] != "admin" || rev.body["Source"] != "ansible" {
		t.Errorf("the commit: user %v source %v; want admin, ansible", rev.body["User"], rev.body["Source"])
	}
}

// TestAnsibleGenericModulesHideSecrets: the generic modules (swmgr_object,
// swmgr_config) take their objects as raw data, yet the value of every
// field the model marks secret is hidden at -vvv with --diff: in a task that
// succeeds, in one the switch refuses, and in one whose arguments do not
// validate; the succeeding tasks did set the secrets.
func TestAnsibleGenericModulesHideSecrets(t *testing.T) {
	env := ansibleEnv(t)
	s := startServer(t, "")
	secrets := []string{"obj-secret-zq81", "cfg-secret-zq82", "obj-secret-zq83", "obj-secret-zq84", "cfg-secret-zq85", "cfg-secret-zq86"}
	play := playHeader + fmt.Sprintf(`    - name: an object's secret
      swmgr.switch.swmgr_object:
        kind: Tacacs
        config: [{ServerIp: 192.0.2.71, Secret: %s}]
    - name: a resource's secret
      swmgr.switch.swmgr_config:
        resources:
          - kind: RadiusServer
            config: [{server_ip: 192.0.2.72, secret: %s}]
    - name: refused by the switch
      swmgr.switch.swmgr_object:
        kind: Tacacs
        config: [{ServerIp: 192.0.2.73, Secret: %s, Port: 99999}]
      ignore_errors: true
    - name: arguments that do not validate
      swmgr.switch.swmgr_object:
        kind: Tacacs
        state: bogus
        config: [{ServerIp: 192.0.2.74, Secret: %s}]
      ignore_errors: true
    - name: a resource refused by the switch
      swmgr.switch.swmgr_config:
        resources:
          - kind: RadiusServer
            config: [{ServerIp: 192.0.2.75, Secret: %s, Port: 99999}]
      ignore_errors: true
    - name: a kind that does not exist
      swmgr.switch.swmgr_object:
        kind: Tacacz
        config: [{ServerIp: 192.0.2.76, Secret: %s}]
      ignore_errors: true
`, secrets[0], secrets[1], secrets[2], secrets[3], secrets[4], secrets[5])
	dir := t.TempDir()
	inv, pb := filepath.Join(dir, "inventory.yml"), filepath.Join(dir, "play.yml")
	os.WriteFile(inv, []byte(inventoryOf(s)), 0o600)
	os.WriteFile(pb, []byte(play), 0o600)
	cmd := exec.Command("ansible-playbook", "-vvv", "--diff", "-i", inv, pb)
	cmd.Env = append(env, "ANSIBLE_STDOUT_CALLBACK=default")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("ansible-playbook: %v\n%s", err, tail(string(out), 4000))
	}
	if !strings.Contains(string(out), "changed=2") || !strings.Contains(string(out), "ignored=4") {
		t.Errorf("want 2 changed tasks and 4 ignored failures:\n%s", tail(string(out), 3000))
	}
	for _, secret := range secrets {
		if i := strings.Index(string(out), secret); i >= 0 {
			t.Errorf("ansible's output shows %s: ...%s...", secret, string(out)[max(0, i-300):min(len(out), i+100)])
		}
	}
	s.expect(t, 200, "GET", "/config/Tacacs?ServerIp=192.0.2.71", "")
	s.expect(t, 200, "GET", "/config/RadiusServer?ServerIp=192.0.2.72", "")
}
