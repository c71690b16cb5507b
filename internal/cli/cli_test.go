package cli

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/testserver"
)

func TestTokenize(t *testing.T) {
	for _, tc := range []struct {
		line string
		want []string
		err  bool
	}{
		{"interface fpPort 1", []string{"interface", "fpPort", "1"}, false},
		{`description "to spine 1"`, []string{"description", "to spine 1"}, false},
		{`Description ""`, []string{"Description", ""}, false},
		{`x "a \"b\" \\c"`, []string{"x", `a "b" \c`}, false},
		{`x "open`, nil, true},
		{"  \t ", nil, false},
	} {
		toks, err := tokenize(tc.line)
		if (err != nil) != tc.err {
			t.Errorf("%q: err %v", tc.line, err)
			continue
		}
		var got []string
		for _, tk := range toks {
			got = append(got, tk.text)
		}
		if strings.Join(got, "|") != strings.Join(tc.want, "|") {
			t.Errorf("%q: got %q, want %q", tc.line, got, tc.want)
		}
		for _, v := range tc.want {
			if back, _ := tokenize(quote(v)); len(back) != 1 || back[0].text != v {
				t.Errorf("quote(%q) does not read back: %q", v, quote(v))
			}
		}
	}
}

func TestPipes(t *testing.T) {
	text := "a one\nb two\nc one\n"
	for _, tc := range []struct{ line, cmd, out string }{
		{"show run | include one", "show run ", "a one\nc one\n"},
		{"show run | exclude one", "show run ", "b two\n"},
		{"show run | inc one | count", "show run ", "Count: 2 lines\n"},
		{`show x "a|b" | count`, `show x "a|b" `, "Count: 3 lines\n"},
	} {
		cmd, pipes, err := splitPipes(tc.line)
		if err != nil {
			t.Fatalf("%q: %v", tc.line, err)
		}
		if cmd != tc.cmd || filter(text, pipes) != tc.out {
			t.Errorf("%q: cmd %q out %q", tc.line, cmd, filter(text, pipes))
		}
	}
	for _, bad := range []string{"show | frobnicate", "show | include", "show | include (", "show | count 3"} {
		if _, _, err := splitPipes(bad); err == nil {
			t.Errorf("%q: accepted", bad)
		}
	}
}

func TestSplitCommands(t *testing.T) {
	got := SplitCommands(`enable; config ;description "a;b"`)
	if strings.Join(got, "|") != `enable|config|description "a;b"` {
		t.Errorf("got %q", got)
	}
}

func TestCheckValue(t *testing.T) {
	reg := model.Builtin()
	port := reg.Lookup(model.Config, "Port")
	for _, tc := range []struct {
		field, text string
		want        any
		msg         string
	}{
		{"Mtu", "9000", int64(9000), ""},
		{"Mtu", "10", nil, "ERROR: Invalid Value 10, must be beteween 68-9216"},
		{"Mtu", "x", nil, "ERROR: Invalid Value x, must be beteween 68-9216"},
		{"Duplex", "half_duplex", "Half_Duplex", ""},
		{"Duplex", "Quarter", nil, "ERROR: Invalid Selection Quarter, must be one of Half_Duplex,Full_Duplex"},
		{"EnableFEC", "true", true, ""},
		{"EnableFEC", "maybe", nil, "ERROR: Invalid Selection maybe, must be one of True,False"},
		{"Description", "uplink", "uplink", ""},
	} {
		v, msg := checkValue(port.Field(tc.field), tc.text)
		if v != tc.want || msg != tc.msg {
			t.Errorf("%s %q: got %v %q, want %v %q", tc.field, tc.text, v, msg, tc.want, tc.msg)
		}
	}
}

// TestPrompts checks FlexSwitch's prompt rule on every declared context.
func TestPrompts(t *testing.T) {
	s := &Session{cat: newCatalog(model.Builtin(), nil), host: "leaf1", mode: ConfigMode}
	kind := func(n string, c model.Class) *model.Kind { return s.cat.reg.Lookup(c, n) }
	push := func(k *model.Kind, value, extra string) {
		s.stack = append(s.stack, &frame{kind: k, prompt: s.promptFor(k, value, extra)})
	}
	cases := []struct {
		steps [][3]string // kind, value, extra
		want  string
	}{
		{[][3]string{{"Port", "1", ""}}, "leaf1(config-if-fpPort-1)#"},
		{[][3]string{{"Port", "1", ""}, {"IPv4Intf", "10.1.1.1/30", ""}}, "leaf1(config-if-fpPort-1-ip-10.1.1.1/30)#"},
		{[][3]string{{"BGPGlobal", "65001", ""}}, "leaf1(config-router-bgp-65001)#"},
		{[][3]string{{"BGPGlobal", "65001", ""}, {"BGPv4Neighbor", "10.1.1.2", ""}}, "leaf1(config-router-bgp-65001-neighbor-10.1.1.2)#"},
		{[][3]string{{"BGPGlobal", "65001", ""}, {"BGPVrf", "red", ""}, {"BGPv4Neighbor", "10.2.2.2", ""}}, "leaf1(config-router-bgp-65001-vrf-red-neighbor-10.2.2.2)#"},
		{[][3]string{{"User", "alice", ""}}, "leaf1(config-user)#"},
		{[][3]string{{"Vrf", "red", ""}}, "leaf1(config-vrf)#"},
		{[][3]string{{"Span", "s1", ""}}, "leaf1(config-span-session-s1)#"},
		{[][3]string{{"NtpServer", "10.0.0.5", ""}}, "leaf1(config-ntp-server-10.0.0.5)#"},
		{[][3]string{{"ConfigArchiveServer", "10.0.0.9", ""}}, "leaf1(config-archive-server-10.0.0.9)#"},
		{[][3]string{{"SystemParam", "", ""}}, "leaf1(config-system)#"},
		{[][3]string{{"ResetConfigToFile", "", ""}}, "leaf1(config-reset-config-toFile)#"},
		{[][3]string{{"SaveConfig", "", "toFile"}}, "leaf1(config-save-config-toFile)#"},
		{[][3]string{{"LogicalIntf", "Loopback1", ""}}, "leaf1(config-if)#"},
		{[][3]string{{"LogicalIntf", "Loopback1", ""}, {"IPv4Intf", "10.0.0.1/32", ""}}, "leaf1(config-if-ip-10.0.0.1/32)#"},
		{[][3]string{{"LLDPGlobal", "", ""}}, "leaf1(config-lldp)#"},
		{[][3]string{{"DhcpRelayGlobal", "", ""}}, "leaf1(config-dhcp_relay)#"},
	}
	for _, tc := range cases {
		s.stack = nil
		for _, st := range tc.steps {
			k := kind(st[0], model.Config)
			if k == nil {
				k = kind(st[0], model.Action)
			}
			push(k, st[1], st[2])
		}
		if got := s.Prompt(); got != tc.want {
			t.Errorf("%v: prompt %q, want %q", tc.steps, got, tc.want)
		}
	}
	s.stack, s.mode = nil, UserMode
	if s.Prompt() != "leaf1>" {
		t.Errorf("user mode prompt %q", s.Prompt())
	}
	s.mode = EnableMode
	if s.Prompt() != "leaf1#" {
		t.Errorf("enable prompt %q", s.Prompt())
	}
}

func TestResolveAmbiguity(t *testing.T) {
	s := &Session{cat: newCatalog(model.Builtin(), nil), mode: ConfigMode}
	toks, _ := tokenize("sho")
	s.stack = []*frame{{kind: s.cat.reg.Lookup(model.Config, "Port")}}
	m, _, _, amb := resolve(toks, s.configOptions(true))
	if m != nil || strings.Join(amb, " ") != "show showunapplied" {
		t.Errorf("sho: matched %v, ambiguous %q", m, amb)
	}
	// sh is show, as on every switch CLI, though showunapplied and
	// shutdown share the prefix.
	toks, _ = tokenize("sh")
	if m, _, _, _ = resolve(toks, s.configOptions(true)); len(m) == 0 || m[0].control != "show" {
		t.Errorf("sh does not select show: %v", m)
	}
	toks, _ = tokenize("shut")
	m, _, _, _ = resolve(toks, s.configOptions(true))
	if len(m) == 0 || m[0].field == nil || m[0].field.Name != "AdminState" {
		t.Errorf("shut does not select AdminState: %v", m)
	}
	toks, _ = tokenize("AdminState")
	if m, _, _, _ = resolve(toks, s.configOptions(true)); len(m) == 0 || m[0].field == nil {
		t.Errorf("the REST name is not a synonym")
	}
}

func TestDiffAndSort(t *testing.T) {
	ops := diffLines([]string{"a", "b", "c"}, []string{"a", "c", "d"})
	var got []string
	for _, o := range ops {
		got = append(got, string(o.mark)+o.line)
	}
	if strings.Join(got, ",") != " a,-b, c,+d" {
		t.Errorf("diff %q", got)
	}
	if l := naturalSort([]string{"fpPort10", "fpPort2", "fpPort1s2", "fpPort1"}); strings.Join(l, ",") != "fpPort1,fpPort1s2,fpPort2,fpPort10" {
		t.Errorf("natural sort %q", l)
	}
}

func TestHasSecret(t *testing.T) {
	reg := model.Builtin()
	for line, want := range map[string]bool{
		"user bob password s3cretpw": true,
		"Password abcdefgh":          true,
		"Passphrase x":               true,
		"Passwor abcdefgh":           true, // a unique prefix sets the field too
		"user bob pass s3cretpw":     true,
		`user bob password "s3cr pw`: true, // unterminated
		"router_id 10.0.0.1":         false,
		"show user":                  false,
	} {
		if HasSecret(reg, line) != want {
			t.Errorf("%q: HasSecret %v", line, !want)
		}
	}
}

// run feeds script to a session on a real server stack and returns the
// transcript.
func run(t *testing.T, srv *testserver.Server, script string) (string, error) {
	t.Helper()
	api, err := client.New(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	err = Run(context.Background(), api, RunOptions{In: strings.NewReader(script), Out: &out, Endpoint: "x"})
	return out.String(), err
}

func startServer(t *testing.T) *testserver.Server {
	t.Helper()
	srv, err := testserver.Start("", testserver.Options{Ports: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	return srv
}

func TestBadInputQueuesNothing(t *testing.T) {
	srv := startServer(t)
	cases := []struct{ line, want string }{
		{"interface fpPort 1\nduplex Quarter", "ERROR: Invalid Selection Quarter, must be one of Half_Duplex,Full_Duplex"},
		{"interface fpPort 1\nmtu 5", "ERROR: Invalid Value 5, must be beteween 68-9216"},
		{"frobnicate 3", "frobnicate 3\n^\nERROR Invalid command entered"},
		{"interface fpPort 1\nmtu", "ERROR: Value expected for mtu"},
		{"interface fpPort 1\nsho", "% Ambiguous command: sho → show showunapplied"},
		{"interface fpPort 1\nMediaType xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", "ERROR: 400"},
		{"no vrf nosuch", "ERROR: Invalid Value for deletion"},
		{"interface fpPort 99", "ERROR: Invalid Value fpPort99, no such Port"},
	}
	for _, tc := range cases {
		out, err := run(t, srv, "enable\nconfig\n"+tc.line+"\nshowunapplied\n")
		if err == nil {
			t.Errorf("%q: exit status 0", tc.line)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%q: output lacks %q:\n%s", tc.line, tc.want, out)
		}
		if strings.Contains(out, "object:") {
			t.Errorf("%q: something was queued:\n%s", tc.line, out)
		}
	}
}

func TestApplyFailureKeepsEverythingPending(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	// Each entry is valid when staged; between staging and apply another
	// client takes the same address in the same VRF, so only the commit
	// can refuse it (staging already refuses what it can see).
	staged := `enable
config
vrf blue
exit
interface fpPort 1
ip address 10.9.9.1/24
exit
exit
`
	rest := `apply
showunapplied
`
	in := &hookReader{parts: []string{staged, rest}, before: func(part int) {
		if part == 1 {
			if _, err := api.Create(context.Background(), "IPv4Intf", client.Object{"IntfRef": "fpPort2", "IpAddr": "10.9.9.1/24"}); err != nil {
				t.Errorf("the other client's create: %v", err)
			}
		}
	}}
	var buf bytes.Buffer
	err := Run(context.Background(), api, RunOptions{In: in, Out: &buf, Endpoint: "x"})
	out := buf.String()
	if err == nil || !strings.Contains(out, "FAILED: ") || !strings.Contains(out, failBanner) {
		t.Fatalf("apply did not fail as FlexSwitch printed it (%v):\n%s", err, out)
	}
	tail := out[strings.LastIndex(out, "showunapplied"):]
	for _, obj := range []string{"object: Vrf", "object: IPv4Intf"} {
		if !strings.Contains(tail, obj) {
			t.Errorf("%s is no longer pending:\n%s", obj, tail)
		}
	}
	if _, err := api.Get(context.Background(), "Vrf", client.Object{"Vrf": "blue"}); !client.IsNotFound(err) {
		t.Errorf("the failed apply created Vrf blue (%v)", err)
	}
}

// hookReader hands out parts one Read at a time, calling before(i) first:
// the session reads part i only once it has run every line before it.
type hookReader struct {
	parts  []string
	before func(part int)
	next   int
	rest   string
}

func (r *hookReader) Read(p []byte) (int, error) {
	if r.rest == "" {
		if r.next == len(r.parts) {
			return 0, io.EOF
		}
		r.before(r.next)
		r.rest = r.parts[r.next]
		r.next++
	}
	n := copy(p, r.rest)
	r.rest = r.rest[n:]
	return n, nil
}

func testserverStart() (*testserver.Server, error) {
	return testserver.Start("", testserver.Options{Ports: 4})
}

func mustBuiltin() *model.Registry { return model.Builtin() }

func FuzzTokenize(f *testing.F) {
	for _, s := range []string{`a "b c" d`, `x "\"" | include y`, `"`, `| | |`, `show run | count`} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		toks, err := tokenize(line)
		if err != nil {
			return
		}
		for _, tk := range toks {
			if back, err := tokenize(quote(tk.text)); err != nil || len(back) != 1 || back[0].text != tk.text {
				t.Fatalf("%q does not survive quote: %q", tk.text, quote(tk.text))
			}
		}
		splitPipes(line)
		SplitCommands(line)
	})
}

func TestHistoryDiffRollback(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	ctx := context.Background()
	newest := func() uint64 {
		for r, err := range api.Revisions(ctx) {
			if err != nil {
				t.Fatal(err)
			}
			return r.Revision
		}
		return 0
	}
	before := newest()
	if out, err := run(t, srv, "enable\nconfig\nvrf hist1\nexit\ninterface fpPort 3\nmtu 9000\napply comment first\n"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	after := newest()
	out, err := run(t, srv, fmt.Sprintf("show config diff %d %d\nshow config diff %d\nshow config history\nshow config revision %d\n", before, after, before, after))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"+ vrf hist1", "+ interface fpPort 3\n+   mtu 9000", "first", "create Vrf Vrf=hist1"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	// rollback loads the way back into the pending config; apply takes it.
	out, err = run(t, srv, fmt.Sprintf("enable\nconfig\nrollback %d\nshow config diff\napply\n", before))
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"- vrf hist1", "-   mtu 9000", "sdk:deleteVrf(hist1) result: SUCCESS"} {
		if !strings.Contains(out, want) {
			t.Errorf("rollback lacks %q:\n%s", want, out)
		}
	}
	if _, err := api.Get(ctx, "Vrf", client.Object{"Vrf": "hist1"}); !client.IsNotFound(err) {
		t.Errorf("Vrf hist1 survived the rollback: %v", err)
	}
	it, err := api.Get(ctx, "Port", client.Object{"IntfRef": "fpPort3"})
	if err != nil || fmt.Sprint(it.Object["Mtu"]) != "1500" {
		t.Errorf("fpPort3 Mtu after rollback: %v %v", it, err)
	}
}

// A secret value is never printed back, whatever the line's fault: the
// echo, the caret line under a bad word and the error messages mask it.
func TestSecretsNotEchoed(t *testing.T) {
	srv := startServer(t)
	for _, tt := range []struct{ name, script, secret string }{
		{"password action where it is not a command", "enable\nuser zed password s3cretA1xyz\n", "s3cretA1xyz"},
		{"two values for a secret", "enable\nconfig\nuser zed\nPassword s3cretB2xyz extra\n", "s3cretB2xyz"},
		{"abbreviated secret word", "enable\nconfig\nuser zed\nPasswor s3cretC3xyz\n", "s3cretC3xyz"},
		{"shortest abbreviation", "enable\nconfig\nuser zed\npa s3cretD4xyz\n", "s3cretD4xyz"},
		{"bad word after a secret", "enable\nconfig\nsave config Passphrase s3cretE5xyz bogus\n", "s3cretE5xyz"},
		{"secret in an unknown command", "frobnicate Password s3cretF6xyz\n", "s3cretF6xyz"},
		{"unterminated quote", "enable\nconfig\nuser zed\nPassword \"s3cretG7xyz\n", "s3cretG7xyz"},
	} {
		out, _ := run(t, srv, tt.script)
		if strings.Contains(out, tt.secret) {
			t.Errorf("%s: the secret is printed:\n%s", tt.name, out)
		}
	}
}

// A revision the switch has not reached yet is an error, not an empty
// change set: "rollback 999999" must not say "Loaded 0 changes".
func TestRevisionNotReached(t *testing.T) {
	srv := startServer(t)
	for _, line := range []string{
		"show config diff 999999",
		"show config diff 1 999999",
		"enable\nconfig\nrollback 999999",
	} {
		out, err := run(t, srv, line+"\n")
		if err == nil || !strings.Contains(out, "ERROR: no revision 999999; the running revision is ") {
			t.Errorf("%q: err %v, output:\n%s", line, err, out)
		}
		if strings.Contains(out, "Loaded") {
			t.Errorf("%q loaded a rollback:\n%s", line, out)
		}
	}
}

func TestConfirmedApply(t *testing.T) {
	srv := startServer(t)
	out, err := run(t, srv, "enable\nconfig\nvrf conf1\nexit\napply confirmed 5\nconfirm\nshow running-config\nshow running_config full | include conf1\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"is rolled back at", "unless 'confirm' is entered", "confirmed", "vrf conf1"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// TestCancelConfirmedApply: cancel rolls back a commit awaiting
// confirmation now, as its timer would: the session's own last confirmed
// apply, or, from another session, the one the switch awaits or the
// revision named; with none awaiting, cancel is an error and nothing
// changes.
func TestCancelConfirmedApply(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	latest := func() client.Revision {
		t.Helper()
		for r, err := range api.Revisions(context.Background(), client.PageSize(1)) {
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		t.Fatal("no revision")
		return client.Revision{}
	}
	for _, tc := range []struct {
		name, vrf string
		cancel    func(rev uint64) string // the other session's script, "" for the session's own cancel
	}{
		{"own", "cancel1", nil},
		{"awaited", "cancel2", func(uint64) string { return "enable\ncancel\n" }},
		{"named", "cancel3", func(rev uint64) string { return fmt.Sprintf("enable\nconfig\ncancel %d\n", rev) }},
	} {
		script := "enable\nconfig\nvrf " + tc.vrf + "\nexit\napply confirmed 5\n"
		if tc.cancel == nil {
			script += "cancel\n"
		}
		out, err := run(t, srv, script)
		if err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		rev := latest().Revision // the confirmed apply's, or the session's cancel's
		if tc.cancel == nil {
			rev--
		} else if out, err = run(t, srv, tc.cancel(rev)); err != nil {
			t.Fatalf("%s: %v\n%s", tc.name, err, out)
		}
		want := fmt.Sprintf("Revision %d cancelled: rolled back in revision %d", rev, rev+1)
		if !strings.Contains(out, want) {
			t.Errorf("%s: lacks %q:\n%s", tc.name, want, out)
		}
		if r := latest(); r.Revision != rev+1 || r.Comment != fmt.Sprintf("revision %d cancelled", rev) {
			t.Errorf("%s: the latest revision is %d %q", tc.name, r.Revision, r.Comment)
		}
		if p, err := api.PendingConfirmation(context.Background()); err != nil || p != nil {
			t.Errorf("%s: still awaiting after cancel: %+v %v", tc.name, p, err)
		}
		running, err := run(t, srv, "enable\nshow running_config full | include "+tc.vrf+"\n")
		if err != nil || strings.Contains(running, "vrf "+tc.vrf) {
			t.Errorf("%s: vrf %s still configured after cancel (%v):\n%s", tc.name, tc.vrf, err, running)
		}
	}
	before := latest().Revision
	out, _ := run(t, srv, "enable\ncancel\n")
	if !strings.Contains(out, "ERROR: no commit awaits confirmation") || latest().Revision != before {
		t.Errorf("cancel with none awaiting:\n%s", out)
	}
}

func TestCompatKinds(t *testing.T) {
	srv := startServer(t)
	out, err := run(t, srv, "enable\nconfig\nlldp enable\ninterface logical Loopback1\nip address 10.0.0.1/32\n!\napply\nshow run\nno lldp enable\napply\nshow version\nshow lldp neighbors | count\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"switch(config-if)#ip address", "switch(config-if-ip-10.0.0.1/32)#!",
		"sdk:updateLLDPGlobal(default,Enable=True) result: SUCCESS", "interface logical Loopback1\n  ip address 10.0.0.1/32\n", "lldp\n  enable\n",
		"sdk:updateLLDPGlobal(default,Enable=False) result: SUCCESS", "Applying Show:"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

func TestWrapCell(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"", []string{""}},
		{"short", []string{"short"}},
		{strings.Repeat("a", 30), []string{strings.Repeat("a", 30)}},
		{strings.Repeat("a", 31), []string{strings.Repeat("a", 30), "a"}},
		{strings.Repeat("b", 65), []string{strings.Repeat("b", 30), strings.Repeat("b", 30), "bbbbb"}},
		{"to spine 1 through the long patch panel in row 4", []string{"to spine 1 through the long", "patch panel in row 4"}},
		{"sftp://10.0.0.9/backups/switch-config.json", []string{"sftp://10.0.0.9/backups/switch", "-config.json"}},
	} {
		got := wrapCell(tc.in)
		if !slices.Equal(got, tc.want) {
			t.Errorf("wrapCell(%q) = %q, want %q", tc.in, got, tc.want)
		}
		for _, l := range got {
			if len([]rune(l)) > cellWidth {
				t.Errorf("wrapCell(%q): line %q longer than %d", tc.in, l, cellWidth)
			}
		}
	}
}

func TestWriteTableWraps(t *testing.T) {
	var b strings.Builder
	writeTable(&b, []string{"Name", "Description"}, [][]string{{"x", strings.Repeat("d", 40)}}, true)
	lines := strings.Split(strings.TrimRight(b.String(), "\n"), "\n")
	if len(lines) != 5 {
		t.Fatalf("table has %d lines, want 5 (dash, header, dash, two lines of the wrapped row):\n%s", len(lines), b.String())
	}
	if lines[3] != " x       "+strings.Repeat("d", 30) || lines[4] != "         "+strings.Repeat("d", 10) {
		t.Errorf("wrapped row:\n%q\n%q", lines[3], lines[4])
	}
}

// TestRoutesAndDerivedKinds covers a kind with a two-part key and a record
// list (IPv4Route) and a kind without a CLI declaration (Vlan, whose
// command is derived from the model): contexts, one-liners, record edits,
// show run and its round trip, checked against REST.
func TestRoutesAndDerivedKinds(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	script := `enable
config
interface fpPort 1
ip address 10.1.1.1/30
no shutdown
!
ip route 10.2.0.0 255.255.0.0
nexthop 10.1.1.2 weight 5
nexthop 10.1.1.3
no nexthop 10.1.1.3
cost 20
!
ip route 10.3.0.0 255.255.0.0 nexthop 10.1.1.2
ip route 10.9.9.9 255.255.255.255 nullroute
vlan 10
IntfList fpPort2
UntagIntfList fpPort 3
Description "users of floor 2"
!
apply
show run
show vlan
`
	out, err := run(t, srv, script)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{
		"switch(config-ip-route-10.2.0.0-255.255.0.0)#nexthop 10.1.1.2 weight 5",
		"switch(config-vlan)#IntfList fpPort2",
		"sdk:createIPv4Route(10.2.0.0,255.255.0.0",
		"sdk:createVlan(10",
		"!\nip route 10.2.0.0 255.255.0.0\n  cost 20\n  nexthop 10.1.1.2 weight 5\n",
		"!\nip route 10.3.0.0 255.255.0.0\n  nexthop 10.1.1.2\n",
		"!\nip route 10.9.9.9 255.255.255.255\n  nullroute\n",
		"!\nvlan 10\n  IntfList fpPort2\n  UntagIntfList fpPort3\n  Description \"users of floor 2\"\n",
		"#show vlan\nApplying Show:\n", " VlanId    IntfList",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
	it, err := api.Get(context.Background(), "IPv4Route", client.Object{"DestinationNw": "10.2.0.0", "NetworkMask": "255.255.0.0"})
	if err != nil {
		t.Fatal(err)
	}
	hops, _ := it.Object["NextHop"].([]any)
	if len(hops) != 1 || fmt.Sprint(hops[0].(map[string]any)["NextHopIp"]) != "10.1.1.2" || fmt.Sprint(hops[0].(map[string]any)["Weight"]) != "5" {
		t.Errorf("IPv4Route NextHop over REST: %v", it.Object["NextHop"])
	}
	if _, err := api.Get(context.Background(), "Vlan", client.Object{"VlanId": 10}); err != nil {
		t.Errorf("Vlan 10 over REST: %v", err)
	}

	// Round trip: the show run replayed on a fresh switch reads back the
	// same. What it cannot reproduce (the admin's password: secrets are
	// never shown) it refuses line by line, naming the field, and the
	// replay exits non-zero.
	run1 := out[strings.LastIndex(out, "printing without defaults"):strings.LastIndex(out, "switch(config)#show vlan")]
	if !strings.Contains(run1, "  Password "+NotShown+"\n") {
		t.Errorf("show run does not mark the admin's password as not shown:\n%s", run1)
	}
	srv2 := startServer(t)
	out2, err := run(t, srv2, "enable\nconfig\n"+run1+"apply\nshow run\n")
	if err == nil {
		t.Errorf("a replay that could not set a secret exited 0:\n%s", out2)
	}
	if n, m := strings.Count(out2, "ERROR"), strings.Count(out2, "ERROR: Password: show run never shows a secret"); n != strings.Count(run1, NotShown) || m != n {
		t.Errorf("replay: %d errors, %d of them the secrets not shown; want one per %s line:\n%s", n, m, NotShown, out2)
	}
	run2 := out2[strings.LastIndex(out2, "printing without defaults"):]
	run2 = strings.TrimSuffix(run2[:strings.LastIndex(run2, "\n")+1], "switch(config)#\n")
	if run1 != run2 {
		t.Errorf("show run does not round-trip:\nfirst:\n%s\nreplayed:\n%s", run1, run2)
	}

	// Bad input in a record: nothing changes.
	out3, err := run(t, srv, "enable\nconfig\nip route 10.2.0.0 255.255.0.0\nnexthop 10.1.1.4 weight 999\nnexthop 10.1.1.4 colour red\nno nexthop 10.7.7.7\n!\nip route 10.2.0.0\nshowunapplied\n")
	if err == nil {
		t.Errorf("bad record input: exit status 0\n%s", out3)
	}
	for _, want := range []string{"ERROR: Invalid Value 999, must be beteween 0-255", "ERROR Invalid command entered: colour", "ERROR: Invalid Value 10.7.7.7, not in nexthop", "ERROR: Value expected for ip route"} {
		if !strings.Contains(out3, want) {
			t.Errorf("lacks %q:\n%s", want, out3)
		}
	}
	if strings.Contains(out3, "object:") {
		t.Errorf("bad record input queued something:\n%s", out3)
	}
}

// TestApplyWithRefusedActionChangesNothing: an action the server refuses
// stops the whole apply before the commit, so the objects typed with it
// are not applied either and everything stays pending.
func TestApplyWithRefusedActionChangesNothing(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	cases := []struct{ name, script, want string }{
		{"short password", "vrf blue\n!\nuser admin password short\napply\nshowunapplied\n", "FAILED: 400"},
		{"Nonce without Passphrase", "vrf blue\n!\nsave config toFile\nNonce abc\n!\napply\nshowunapplied\n", "FAILED: 400"},
		{"confirmed with actions", "vrf blue\n!\nsave config\napply confirmed 5\nshowunapplied\n", "ERROR: apply confirmed cannot run actions"},
	}
	for _, tc := range cases {
		out, err := run(t, srv, "enable\nconfig\n"+tc.script)
		if err == nil {
			t.Errorf("%s: exit status 0\n%s", tc.name, out)
		}
		if !strings.Contains(out, tc.want) {
			t.Errorf("%s: lacks %q:\n%s", tc.name, tc.want, out)
		}
		if strings.Contains(out, "result: SUCCESS") {
			t.Errorf("%s: something was applied:\n%s", tc.name, out)
		}
		if !strings.Contains(out, "object: Vrf   status: PENDING CONFIG") {
			t.Errorf("%s: the Vrf is no longer pending:\n%s", tc.name, out)
		}
		if _, err := api.Get(context.Background(), "Vrf", client.Object{"Vrf": "blue"}); !client.IsNotFound(err) {
			t.Errorf("%s: Vrf blue exists after the refused apply (%v)", tc.name, err)
		}
	}
}

// TestConfirmStatus: the commit awaiting confirmation is shown, with its
// revision, user and time left, in the session that made it and in
// another one; after confirm (or with none) there is none.
func TestConfirmStatus(t *testing.T) {
	srv := startServer(t)
	out, err := run(t, srv, "enable\nshow config confirm-status\nconfig\nvrf conf1\nexit\napply confirmed 5\nshow config confirm-status\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "#show config confirm-status\nApplying Show:\nNo commit awaits confirmation\n") {
		t.Errorf("before any confirmed apply:\n%s", out)
	}
	api, _ := client.New(srv.URL)
	var rev uint64
	for r, err := range api.Revisions(context.Background(), client.PageSize(1)) {
		if err != nil {
			t.Fatal(err)
		}
		rev = r.Revision
		break
	}
	row := regexp.MustCompile(`(?m)^ ` + fmt.Sprint(rev) + ` +(\S+) .* (4:5\d|5:00)$`)
	if !row.MatchString(out) {
		t.Errorf("the confirm-status of the session lacks revision %d with about 5 minutes left:\n%s", rev, out)
	}
	other, err := run(t, srv, "enable\nshow config confirm-status\nshow config confirm-status | json\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, other)
	}
	if !row.MatchString(other) || !strings.Contains(other, `"Awaiting": true`) || !strings.Contains(other, fmt.Sprintf(`"Revision": %d`, rev)) {
		t.Errorf("another session does not see revision %d awaiting confirmation:\n%s", rev, other)
	}
	after, err := run(t, srv, fmt.Sprintf("enable\nconfirm %d\nshow config confirm-status\n", rev))
	if err != nil {
		t.Fatalf("%v\n%s", err, after)
	}
	if !strings.Contains(after, "No commit awaits confirmation") {
		t.Errorf("after confirm:\n%s", after)
	}
}

// TestReloadCLIModel: reload_cli_model reads the host name again and
// leaves out the kinds the server does not serve (here an older server,
// which answers unknown_kind for Vlan once the session has started).
func TestReloadCLIModel(t *testing.T) {
	var older atomic.Bool
	srv, err := testserver.Start("", testserver.Options{Ports: 4, Wrap: func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if older.Load() && strings.Contains(r.URL.Path, "/Vlan") {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(http.StatusNotFound)
				io.WriteString(w, `{"Result":"Error","Error":{"Status":404,"Code":"unknown_kind","Message":"unknown config object \"Vlan\""}}`)
				return
			}
			h.ServeHTTP(w, r)
		})
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(srv.Close)
	api, _ := client.New(srv.URL)
	in := &hookReader{parts: []string{"enable\nconfig\nvlan 10\n!\nclearunapplied\nend\n", "reload_cli_model\nconfig\nvlan 10\n"}, before: func(part int) {
		if part == 1 {
			older.Store(true)
			if _, err := api.UpdateByKey(context.Background(), "SystemParam", client.Object{"Vrf": "default", "Hostname": "leaf9"}); err != nil {
				t.Errorf("hostname: %v", err)
			}
		}
	}}
	var buf bytes.Buffer
	err = Run(context.Background(), api, RunOptions{In: in, Out: &buf, Endpoint: "x"})
	out := buf.String()
	if err == nil {
		t.Errorf("vlan after the reload did not fail:\n%s", out)
	}
	for _, want := range []string{"switch(config)#vlan 10\nswitch(config-vlan)#", "switch#reload_cli_model\nCLI model reloaded: ", "Not served by this swmgr, left out: Vlan\nleaf9#config", "leaf9(config)#vlan 10\nvlan 10\n^\nERROR Invalid command entered"} {
		if !strings.Contains(out, want) {
			t.Errorf("lacks %q:\n%s", want, out)
		}
	}
}

// TestShellAccess: who `shell` lets out of the CLI (the bash launcher is
// replaced by a recorder; test/cli_tty_test.go runs the real bash).
func TestShellAccess(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	ctx := context.Background()
	for _, u := range []struct{ name, access string }{{"clionly", "CLI"}, {"basher", "Bash"}} {
		if _, err := api.Create(ctx, "User", client.Object{"Name": u.name, "Password": "shell-test-pw1", "Access": u.access}); err != nil {
			t.Fatal(err)
		}
	}
	cases := []struct {
		name    string
		offered bool
		user    string
		root    bool
		mode    string
		ran     bool
		want    string
	}{
		{"script or --url", false, "basher", false, "enable\n", false, "ERROR: shell is available only at a terminal on the switch itself"},
		{"Access CLI", true, "clionly", false, "enable\n", false, "ERROR: shell is not allowed for clionly (Access CLI; an admin can set Access Bash)"},
		{"no such User", true, "nobody1", false, "enable\n", false, "ERROR: shell is not allowed: nobody1 is not a User of the switch"},
		{"user mode", true, "basher", false, "", false, "ERROR Invalid command entered"},
		{"Access Bash", true, "basher", false, "enable\n", true, "Starting bash as basher"},
		{"root", true, "root", true, "enable\n", true, "Starting bash as root"},
	}
	for _, tc := range cases {
		ran := false
		o := Options{OSUser: tc.user, Root: tc.root}
		if tc.offered {
			o.Shell = func(context.Context) error { ran = true; return nil }
		}
		var out bytes.Buffer
		o.Out = &out
		s, err := NewSession(ctx, api, "x", o)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range strings.Split(tc.mode+"shell", "\n") {
			s.Execute(l)
		}
		if ran != tc.ran || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%s: ran %v (want %v), output:\n%s", tc.name, ran, tc.ran, out.String())
		}
	}
}

// TestCompleteKeysWithSeveralParts: completion and help walk a two-part
// key part by part, with the values of the existing objects.
func TestCompleteKeysWithSeveralParts(t *testing.T) {
	srv := startServer(t)
	api, _ := client.New(srv.URL)
	if _, err := api.Create(context.Background(), "IPv4Route", client.Object{"DestinationNw": "10.5.0.0", "NetworkMask": "255.255.0.0", "NullRoute": true}); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, err := NewSession(context.Background(), api, "x", Options{Out: &out})
	if err != nil {
		t.Fatal(err)
	}
	s.mode = ConfigMode
	for _, tc := range []struct{ line, want string }{
		{"ip route ", "10.5.0.0"},
		{"ip route 10.5.0.0 ", "255.255.0.0"},
	} {
		cands, _ := s.Complete(tc.line)
		if !slices.Contains(cands, tc.want) {
			t.Errorf("Complete(%q) = %q, want %q among them", tc.line, cands, tc.want)
		}
	}
	s.Execute("ip route ?")
	if !strings.Contains(out.String(), "10.5.0.0") || !strings.Contains(out.String(), "network address") {
		t.Errorf("help of ip route:\n%s", out.String())
	}
	out.Reset()
	s.Execute("ip route 10.5.0.0 255.255.0.0 ?")
	if !strings.Contains(out.String(), "nexthop") || !strings.Contains(out.String(), "list, one per command: <nexthopip> [nexthopintref <string>] [weight <integer>]") {
		t.Errorf("help inside ip route:\n%s", out.String())
	}
}

func TestRedistribute(t *testing.T) {
	srv := startServer(t)
	out, err := run(t, srv, "enable\nconfig\nrouter bgp 65001\nredistribute CONNECTED\nredistribute STATIC\nno redistribute STATIC\n!\napply\nshow run\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "!\nrouter bgp 65001\n  redistribute CONNECTED\n") || strings.Contains(out, "redistribute STATIC\n!") {
		t.Errorf("show run:\n%s", out)
	}
}

// TestRollbackPrevious: `rollback <n>` names a revision; Junos's reading,
// n commits ago, is `rollback previous <n>`.
func TestRollbackPrevious(t *testing.T) {
	srv := startServer(t)
	for _, vrf := range []string{"prev1", "prev2"} {
		if out, err := run(t, srv, "enable\nconfig\nvrf "+vrf+"\nexit\napply\n"); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
	}
	// One commit ago: prev2 goes, prev1 stays.
	out, err := run(t, srv, "enable\nconfig\nrollback previous 1\nshow config diff\napply\n")
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if !strings.Contains(out, "- vrf prev2") || strings.Contains(out, "- vrf prev1") || !strings.Contains(out, "sdk:deleteVrf(prev2) result: SUCCESS") {
		t.Errorf("rollback previous 1:\n%s", out)
	}
	for _, line := range []string{"rollback previous 0", "rollback previous x", "rollback previous 100000"} {
		out, err := run(t, srv, "enable\nconfig\n"+line+"\n")
		if err == nil || strings.Contains(out, "Loaded") {
			t.Errorf("%s: err %v:\n%s", line, err, out)
		}
	}
	out, _ = run(t, srv, "enable\nconfig\nrollback ?\n?\n")
	if !strings.Contains(out, "rollback <revision>") || !strings.Contains(out, "rollback previous <n>: to n commits ago") {
		t.Errorf("help does not say what rollback's number is:\n%s", out)
	}
}
