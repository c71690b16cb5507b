package gnoi

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	ospb "github.com/openconfig/gnoi/os"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/debsig"
	"github.com/swmgr/swmgr/internal/engine"
	"github.com/swmgr/swmgr/internal/engine/enginetest"
	"github.com/swmgr/swmgr/internal/gnoi/debtest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// buildDeb makes a Debian package: pkg at version, with a
// /usr/bin/swmgr of size random bytes unless noBinary.
func buildDeb(t *testing.T, pkg, version string, size int, noBinary bool) []byte {
	t.Helper()
	if noBinary {
		return debtest.Build(t, pkg, version, nil)
	}
	bin := make([]byte, size)
	rand.Read(bin)
	return debtest.Build(t, pkg, version, bin)
}

// osHarness serves the OS service of a Server running version over a
// local gRPC connection, with a real engine's config log.
type osHarness struct {
	dir    string
	engine *engine.Engine
	client ospb.OSClient
	srv    *Server
}

func newOSHarness(t *testing.T, version string, o OSOptions) *osHarness {
	t.Helper()
	f := enginetest.New(t, t.TempDir())
	if o.Dir == "" {
		o.Dir = filepath.Join(t.TempDir(), "packages")
	}
	s, err := New(Options{Engine: f.E, Version: version, OS: o})
	if err != nil {
		t.Fatal(err)
	}
	gs := grpc.NewServer()
	ospb.RegisterOSServer(gs, osServer{s: s})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go gs.Serve(ln)
	t.Cleanup(gs.Stop)
	cc, err := grpc.NewClient(ln.Addr().String(), grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cc.Close() })
	return &osHarness{dir: o.Dir, engine: f.E, client: ospb.NewOSClient(cc), srv: s}
}

// installResult is what one Install stream answered.
type installResult struct {
	ready     bool
	progress  int
	validated *ospb.Validated
	err       *ospb.InstallError
	status    error
}

// install runs an Install of content (nil: only the TransferRequest,
// expecting an answer at once) in chunks of 64 KiB; end false leaves out
// the TransferEnd and closes the stream.
func (h *osHarness) install(t *testing.T, tr *ospb.TransferRequest, content []byte, end bool) installResult {
	t.Helper()
	st, err := h.client.Install(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var res installResult
	send := func(r *ospb.InstallRequest) {
		if err := st.Send(r); err != nil && err != io.EOF {
			t.Fatal(err)
		}
	}
	send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferRequest{TransferRequest: tr}})
	first, err := st.Recv()
	if err != nil {
		res.status = err
		return res
	}
	if first.GetTransferReady() == nil {
		res.validated, res.err = first.GetValidated(), first.GetInstallError()
		return res
	}
	res.ready = true
	go func() {
		for len(content) > 0 {
			n := min(len(content), 64<<10)
			if st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferContent{TransferContent: content[:n]}}) != nil {
				return
			}
			content = content[n:]
		}
		if end {
			st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferEnd{TransferEnd: &ospb.TransferEnd{}}})
		} else {
			st.CloseSend()
		}
	}()
	for {
		r, err := st.Recv()
		if err == io.EOF {
			return res
		}
		if err != nil {
			res.status = err
			return res
		}
		switch {
		case r.GetTransferProgress() != nil:
			res.progress++
		case r.GetValidated() != nil:
			res.validated = r.GetValidated()
		case r.GetInstallError() != nil:
			res.err = r.GetInstallError()
		}
	}
}

// kept lists the package directory, leaving out the activation's files.
func (h *osHarness) kept(t *testing.T) []string {
	t.Helper()
	ents, err := os.ReadDir(h.dir)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// Install keeps a streamed swmgr package under its own version
// (TransferReady, progress, Validated), answers a kept version at once,
// and refuses, keeping nothing: a package over the bound (declared or
// sent), what is not a Debian package, another package, a damaged one,
// the running version sent without a version, a stream that stops
// before its end, and an Install while another runs. Each is in the
// config log.
func TestOSInstall(t *testing.T) {
	testneed.Program(t, "dpkg", "dpkg-deb")
	const max = 3 << 20
	h := newOSHarness(t, "1.0", OSOptions{MaxPackage: max})
	// What an Install cut short by a stop of swmgr left.
	os.MkdirAll(h.dir, 0o700)
	os.WriteFile(filepath.Join(h.dir, ".install-123.deb"), []byte("!<arch>\n"), 0o600)
	v2 := buildDeb(t, "swmgr", "2.0~rc1", 5<<19, false) // 2.5 MiB: two progress messages
	res := h.install(t, &ospb.TransferRequest{Version: "2.0~rc1"}, v2, true)
	if !res.ready || res.progress < 2 || res.validated.GetVersion() != "2.0~rc1" || res.err != nil || res.status != nil {
		t.Fatalf("install of 2.0~rc1: %+v", res)
	}
	if got, _ := os.ReadFile(filepath.Join(h.dir, "swmgr_2.0~rc1.deb")); !bytes.Equal(got, v2) {
		t.Fatalf("the kept package is not what was sent (%d bytes of %d)", len(got), len(v2))
	}
	// Kept already: Validated at once, no transfer.
	if res := h.install(t, &ospb.TransferRequest{Version: "2.0~rc1"}, nil, true); res.ready || res.validated.GetVersion() != "2.0~rc1" {
		t.Fatalf("install of a kept version: %+v", res)
	}

	damaged := buildDeb(t, "swmgr", "3.0", 256<<10, false)
	// The data member is last: break its gzip stream.
	for i := len(damaged) - 2000; i < len(damaged)-1000; i++ {
		damaged[i] ^= 0x55
	}
	big := buildDeb(t, "swmgr", "4.0", max+(1<<20), false)
	for _, c := range []struct {
		name    string
		tr      *ospb.TransferRequest
		content []byte
		end     bool
		want    ospb.InstallError_Type
		code    codes.Code // instead of an InstallError
	}{
		{name: "declared too large", tr: &ospb.TransferRequest{Version: "4.0", PackageSize: max + 1}, want: ospb.InstallError_TOO_LARGE},
		{name: "sent too large", tr: &ospb.TransferRequest{Version: "4.0"}, content: big, end: true, want: ospb.InstallError_TOO_LARGE},
		{name: "not a .deb", tr: &ospb.TransferRequest{Version: "5.0"}, content: []byte("#!/bin/sh\nexit 0\n"), end: true, want: ospb.InstallError_PARSE_FAIL},
		{name: "an ar archive, not a .deb", tr: &ospb.TransferRequest{Version: "5.0"}, content: []byte("!<arch>\nnot-debian/     0           0     0     644     0         `\n"), end: true, want: ospb.InstallError_PARSE_FAIL},
		{name: "another package", tr: &ospb.TransferRequest{Version: "2.0"}, content: buildDeb(t, "frr", "2.0", 1024, false), end: true, want: ospb.InstallError_INCOMPATIBLE},
		{name: "no binary", tr: &ospb.TransferRequest{Version: "2.1"}, content: buildDeb(t, "swmgr", "2.1", 0, true), end: true, want: ospb.InstallError_INCOMPATIBLE},
		{name: "damaged", tr: &ospb.TransferRequest{Version: "3.0"}, content: damaged, end: true, want: ospb.InstallError_INTEGRITY_FAIL},
		{name: "the running version, forced", tr: &ospb.TransferRequest{}, content: buildDeb(t, "swmgr", "1.0", 1024, false), end: true, want: ospb.InstallError_INSTALL_RUN_PACKAGE},
		{name: "standby", tr: &ospb.TransferRequest{Version: "6.0", StandbySupervisor: true}, want: ospb.InstallError_NOT_SUPPORTED_ON_BACKUP},
		{name: "no end", tr: &ospb.TransferRequest{Version: "6.0"}, content: buildDeb(t, "swmgr", "6.0", 1024, false), code: codes.Aborted},
	} {
		t.Run(c.name, func(t *testing.T) {
			res := h.install(t, c.tr, c.content, c.end)
			if c.code != codes.OK {
				if status.Code(res.status) != c.code {
					t.Fatalf("%+v, want %s", res, c.code)
				}
			} else if res.err.GetType() != c.want || res.validated != nil {
				t.Fatalf("%+v, want %s", res, c.want)
			}
			if got := h.kept(t); !slices.Equal(got, []string{"swmgr_2.0~rc1.deb"}) {
				t.Errorf("the package directory holds %q", got)
			}
		})
	}

	// One Install at a time: a second one, while the first has its
	// TransferReady, is INSTALL_IN_PROGRESS.
	st, err := h.client.Install(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferRequest{TransferRequest: &ospb.TransferRequest{Version: "7.0"}}})
	if r, err := st.Recv(); err != nil || r.GetTransferReady() == nil {
		t.Fatalf("first install: %v %v", r, err)
	}
	if res := h.install(t, &ospb.TransferRequest{Version: "8.0"}, nil, true); res.err.GetType() != ospb.InstallError_INSTALL_IN_PROGRESS {
		t.Errorf("concurrent install: %+v", res)
	}
	v7 := buildDeb(t, "swmgr", "7.0", 1024, false)
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferContent{TransferContent: v7}})
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferEnd{TransferEnd: &ospb.TransferEnd{}}})
	if r, err := st.Recv(); err != nil || r.GetValidated().GetVersion() != "7.0" {
		t.Fatalf("first install's end: %v %v", r, err)
	}

	page, err := h.engine.ListLog(0, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `"Operation":"Install"`); n != 14 {
		t.Errorf("%d Install entries in the config log, want 14: %s", n, page)
	}
}

// The oldest packages beyond the bound are removed by an Install, never
// the running version's.
func TestOSInstallPrunes(t *testing.T) {
	testneed.Program(t, "dpkg", "dpkg-deb")
	h := newOSHarness(t, "1.0", OSOptions{Keep: 2})
	for i, v := range []string{"1.0", "2.0", "3.0", "4.0"} {
		res := h.install(t, &ospb.TransferRequest{Version: v}, buildDeb(t, "swmgr", v, 1024, false), true)
		if res.validated.GetVersion() != v {
			t.Fatalf("install %s: %+v", v, res)
		}
		// Distinct times, oldest first, whatever the file system's
		// resolution.
		when := time.Now().Add(time.Duration(i-10) * time.Minute)
		os.Chtimes(filepath.Join(h.dir, packageFile(v)), when, when)
	}
	if got, want := h.kept(t), []string{"swmgr_1.0.deb", "swmgr_4.0.deb"}; !slices.Equal(got, want) {
		t.Errorf("kept %q, want %q", got, want)
	}
}

// recordingInstaller records the packages it is asked to install; confirm
// says, per version, whether that version's swmgr becomes ready (it
// confirms the activation as a started swmgr does), fail whether its
// installation fails.
type recordingInstaller struct {
	mu        sync.Mutex
	dir       string
	installed []string
	confirm   map[string]bool
	fail      map[string]bool
}

// carrier carries out activations with r, keeping no store.
func (r *recordingInstaller) carrier(log *slog.Logger) Carrier {
	return Carrier{Install: r.install, Poll: time.Millisecond, Log: log}
}

func (r *recordingInstaller) install(ctx context.Context, deb string) error {
	v := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(deb), PackageName+"_"), ".deb")
	r.mu.Lock()
	r.installed = append(r.installed, v)
	r.mu.Unlock()
	if r.fail[v] {
		return fmt.Errorf("dpkg: error processing archive %s", deb)
	}
	if r.confirm[v] {
		if _, err := ConfirmActivation(r.dir, v); err != nil {
			return err
		}
	}
	return nil
}

// Activate refuses a version not kept (NON_EXISTENT_VERSION) and, while
// the running version's package is not kept, any other; it records the
// activation and starts it; a second one while it is under way is
// refused. Carried out: a new version that says it is ready stays; one
// that does not within the deadline, or fails to install, is replaced by
// the previous one, and Verify says why.
func TestOSActivateVerify(t *testing.T) {
	var started []Activation
	activator := func(ctx context.Context, dir string, a Activation) error {
		started = append(started, a)
		return nil
	}
	dir := filepath.Join(t.TempDir(), "packages")
	h := newOSHarness(t, "1.0", OSOptions{Dir: dir, Activate: activator, Deadline: time.Hour})
	ctx := context.Background()
	keep := func(v string) {
		os.MkdirAll(dir, 0o700)
		if err := os.WriteFile(filepath.Join(dir, packageFile(v)), []byte("!<arch>\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	activate := func(v string) (*ospb.ActivateResponse, error) {
		return h.client.Activate(ctx, &ospb.ActivateRequest{Version: v})
	}
	verify := func(h *osHarness) *ospb.VerifyResponse {
		t.Helper()
		r, err := h.client.Verify(ctx, &ospb.VerifyRequest{})
		if err != nil {
			t.Fatal(err)
		}
		return r
	}

	if r, err := activate("2.0"); err != nil || r.GetActivateError().GetType() != ospb.ActivateError_NON_EXISTENT_VERSION {
		t.Errorf("unknown version: %v %v", r, err)
	}
	if r, err := activate("../1.0"); err != nil || r.GetActivateError().GetType() != ospb.ActivateError_NON_EXISTENT_VERSION {
		t.Errorf("a path for a version: %v %v", r, err)
	}
	keep("2.0")
	if _, err := activate("2.0"); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "Install it first") {
		t.Errorf("running version not kept: %v", err)
	}
	if r, err := h.client.Activate(ctx, &ospb.ActivateRequest{Version: "2.0", NoReboot: true}); status.Code(err) != codes.Unimplemented {
		t.Errorf("no_reboot: %v %v", r, err)
	}
	if len(started) != 0 {
		t.Fatalf("refused activations started: %v", started)
	}
	if r, err := activate("1.0"); err != nil || r.GetActivateOk() == nil || len(started) != 0 {
		t.Errorf("the running version: %v %v, started %v", r, err, started)
	}
	keep("1.0")
	if r, err := activate("2.0"); err != nil || r.GetActivateOk() == nil {
		t.Fatalf("activate 2.0: %v %v", r, err)
	}
	if len(started) != 1 || started[0].From != "1.0" || started[0].To != "2.0" || started[0].State != statePending || started[0].Deadline != time.Hour {
		t.Fatalf("started %+v", started)
	}
	if _, err := activate("2.0"); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "under way") {
		t.Errorf("a second activation: %v", err)
	}
	if r := verify(h); r.GetVersion() != "1.0" || r.GetActivationFailMessage() != "" {
		t.Errorf("verify while pending: %v", r)
	}

	log := slog.New(slog.DiscardHandler)
	// Ready in time: activated, the new version stays.
	in := &recordingInstaller{dir: dir, confirm: map[string]bool{"2.0": true}}
	a, err := CarryOutActivation(ctx, dir, in.carrier(log))
	if err != nil || a.State != stateActivated || !slices.Equal(in.installed, []string{"2.0"}) {
		t.Fatalf("ready in time: %+v %v, installed %v", a, err, in.installed)
	}
	if _, err := CarryOutActivation(ctx, dir, in.carrier(log)); err == nil {
		t.Error("an activation carried out twice")
	}
	h2 := newOSHarness(t, "2.0", OSOptions{Dir: dir, Activate: activator})
	if r := verify(h2); r.GetVersion() != "2.0" || r.GetActivationFailMessage() != "" {
		t.Errorf("verify after activation: %v", r)
	}

	// Never ready: the deadline passes, 2.0 is put back.
	keep("3.0")
	h2.srv.pkgs.o.Deadline = 50 * time.Millisecond
	if r, err := h2.client.Activate(ctx, &ospb.ActivateRequest{Version: "3.0"}); err != nil || r.GetActivateOk() == nil {
		t.Fatalf("activate 3.0: %v %v", r, err)
	}
	in = &recordingInstaller{dir: dir, confirm: map[string]bool{"2.0": true}}
	a, err = CarryOutActivation(ctx, dir, in.carrier(log))
	if err != nil || a.State != stateRolledBack || !slices.Equal(in.installed, []string{"3.0", "2.0"}) {
		t.Fatalf("never ready: %+v %v, installed %v", a, err, in.installed)
	}
	if r := verify(h2); r.GetVersion() != "2.0" || !strings.Contains(r.GetActivationFailMessage(), "swmgr 3.0 was not ready within 50ms") ||
		!strings.Contains(r.GetActivationFailMessage(), "swmgr 2.0 was put back") {
		t.Errorf("verify after a rollback: %v", r)
	}

	// Not installed: put back at once; and when putting back fails too,
	// the record says so.
	for _, c := range []struct {
		fail  map[string]bool
		state string
		want  string
	}{
		{map[string]bool{"3.0": true}, stateRolledBack, "installing swmgr 3.0 failed: dpkg: error processing archive"},
		{map[string]bool{"3.0": true, "2.0": true}, stateFailed, "putting swmgr 2.0 back failed too"},
	} {
		if r, err := h2.client.Activate(ctx, &ospb.ActivateRequest{Version: "3.0"}); err != nil || r.GetActivateOk() == nil {
			t.Fatalf("activate 3.0: %v %v", r, err)
		}
		in = &recordingInstaller{dir: dir, fail: c.fail}
		a, err = CarryOutActivation(ctx, dir, in.carrier(log))
		if err != nil || a.State != c.state || !slices.Equal(in.installed, []string{"3.0", "2.0"}) {
			t.Fatalf("%v: %+v %v, installed %v", c.fail, a, err, in.installed)
		}
		if r := verify(h2); !strings.Contains(r.GetActivationFailMessage(), c.want) {
			t.Errorf("%v: verify %v, want %q", c.fail, r, c.want)
		}
	}

	// The activator cannot start: Internal, and Verify says so.
	h3 := newOSHarness(t, "2.0", OSOptions{Dir: dir, Activate: func(context.Context, string, Activation) error {
		return fmt.Errorf("systemd-run: not running under systemd")
	}})
	if _, err := h3.client.Activate(ctx, &ospb.ActivateRequest{Version: "3.0"}); status.Code(err) != codes.Internal {
		t.Errorf("activator failing: %v", err)
	}
	if r := verify(h3); !strings.Contains(r.GetActivationFailMessage(), "not running under systemd") {
		t.Errorf("verify after the activator failed: %v", r)
	}

	page, err := h.engine.ListLog(0, 100, nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(page), `"Operation":"Activate"`); n != 7 {
		t.Errorf("%d Activate entries in the config log, want 7: %s", n, page)
	}
}

// The store is copied, the service stopped, before the new version runs,
// and put back when the previous version is: what the new one wrote to
// it (a migration the previous one could not read) is undone; when the
// new version stays, so does what it wrote.
func TestActivationKeepsTheStore(t *testing.T) {
	dir, store := t.TempDir(), filepath.Join(t.TempDir(), "swmgr.db")
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		ready bool
		state string
		want  string
	}{
		{false, stateRolledBack, "written by 1.0"},
		{true, stateActivated, "migrated by 2.0"},
	} {
		if err := os.WriteFile(store, []byte("written by 1.0"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := writeActivation(dir, Activation{ID: "x" + c.state, From: "1.0", To: "2.0", Deadline: 20 * time.Millisecond, State: statePending}); err != nil {
			t.Fatal(err)
		}
		var events []string
		stop := func(context.Context) error {
			events = append(events, "stop")
			return nil
		}
		install := func(_ context.Context, deb string) error {
			events = append(events, "install "+filepath.Base(deb))
			if strings.Contains(deb, "2.0") {
				os.WriteFile(store, []byte("migrated by 2.0"), 0o600)
				if c.ready {
					ConfirmActivation(dir, "2.0")
				}
			}
			return nil
		}
		a, err := CarryOutActivation(context.Background(), dir, Carrier{Install: install, Stop: stop, Store: store, Poll: time.Millisecond, Log: log})
		if err != nil || a.State != c.state {
			t.Fatalf("ready %v: %+v %v", c.ready, a, err)
		}
		if got, _ := os.ReadFile(store); string(got) != c.want {
			t.Errorf("ready %v: the store holds %q, want %q", c.ready, got, c.want)
		}
		want := []string{"stop", "install swmgr_2.0.deb"}
		if !c.ready {
			want = append(want, "stop", "install swmgr_1.0.deb")
		}
		if !slices.Equal(events, want) {
			t.Errorf("ready %v: %q, want %q", c.ready, events, want)
		}
		if left, _ := filepath.Glob(filepath.Join(dir, ".store-before-*")); len(left) != 0 {
			t.Errorf("ready %v: the store's copy is left: %v", c.ready, left)
		}
	}
}

// A carrier stopped before the activation ended (the SIGTERM of a
// reboot's shutdown cancels its context, and kills the program of the
// step under way) leaves the activation pending for the next start of
// swmgr to resume, whatever step it was in: nothing put back, nothing
// recorded as failed, the store's copy kept once made.
func TestStoppedCarrierLeavesTheActivationPending(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, step := range []string{"stop", "install swmgr_2.0.deb", "wait"} {
		t.Run(step, func(t *testing.T) {
			dir, store := t.TempDir(), filepath.Join(t.TempDir(), "swmgr.db")
			if err := os.WriteFile(store, []byte("written by 1.0"), 0o600); err != nil {
				t.Fatal(err)
			}
			if err := writeActivation(dir, Activation{ID: "s1", From: "1.0", To: "2.0", Deadline: time.Hour, State: statePending, Boot: "boot-1"}); err != nil {
				t.Fatal(err)
			}
			ctx, sigterm := context.WithCancel(context.Background())
			defer sigterm()
			var events []string
			// do is a step's program: killed by the SIGTERM if it is the
			// step under way.
			do := func(event string) error {
				events = append(events, event)
				if event == step {
					sigterm()
					return fmt.Errorf("%s: signal: killed", event)
				}
				return nil
			}
			install := func(_ context.Context, deb string) error {
				if err := do("install " + filepath.Base(deb)); err != nil {
					return err
				}
				if step == "wait" {
					time.AfterFunc(20*time.Millisecond, sigterm)
				}
				return nil
			}
			carrier := Carrier{Install: install, Stop: func(context.Context) error { return do("stop") }, Store: store, Poll: time.Millisecond, Log: log}
			a, err := CarryOutActivation(ctx, dir, carrier)
			if err == nil || a.State != statePending {
				t.Fatalf("carried out: %+v %v, want an error and the activation pending", a, err)
			}
			if rec, _ := readActivation(dir); rec.State != statePending || rec.Message != "" {
				t.Errorf("recorded %+v, want pending", rec)
			}
			want := []string{"stop"}
			if step != "stop" {
				want = append(want, "install swmgr_2.0.deb")
			}
			if !slices.Equal(events, want) {
				t.Errorf("%q, want %q", events, want)
			}
			_, copyErr := os.Stat(storeCopy(dir, "s1"))
			if kept := copyErr == nil; kept != (step != "stop") {
				t.Errorf("the store's copy kept: %v, want %v", kept, step != "stop")
			}
		})
	}
}

// A started swmgr confirms only a pending activation to its own version.
func TestConfirmActivation(t *testing.T) {
	dir := t.TempDir()
	if ok, err := ConfirmActivation(dir, "2.0"); ok || err != nil {
		t.Errorf("no activation: %v %v", ok, err)
	}
	for _, c := range []struct {
		a       Activation
		version string
		want    bool
	}{
		{Activation{ID: "a", To: "2.0", State: statePending}, "2.0", true},
		{Activation{ID: "b", To: "2.0", State: statePending}, "1.0", false},
		{Activation{ID: "c", To: "2.0", State: stateRolledBack}, "2.0", false},
	} {
		os.Remove(filepath.Join(dir, readyFile))
		if err := writeActivation(dir, c.a); err != nil {
			t.Fatal(err)
		}
		ok, err := ConfirmActivation(dir, c.version)
		if ok != c.want || err != nil || confirmed(dir, c.a.ID) != c.want {
			t.Errorf("%+v by %s: %v %v", c.a, c.version, ok, err)
		}
	}
}

// An activation whose carrier a reboot ended is resolved when swmgr
// starts after the boot, not left pending until its deadline and more:
// the new version running waits for its word only (nothing installed
// again), and is activated once it is ready; the previous version
// running puts it back at once (its store too), however long the
// deadline; an activation of this boot keeps its carrier.
func TestInterruptedActivationResolvedAfterReboot(t *testing.T) {
	log := slog.New(slog.DiscardHandler)
	for _, c := range []struct {
		name       string
		running    string // the swmgr that starts after the boot
		boot       string
		copied     bool // the store was copied before the reboot
		resumed    bool
		ready      bool
		state      string
		installed  []string
		storeAfter string
	}{
		{name: "new version ready", running: "2.0", boot: "boot-2", copied: true, resumed: true, ready: true, state: stateActivated, storeAfter: "migrated by 2.0"},
		{name: "previous version running", running: "1.0", boot: "boot-2", copied: true, resumed: true, state: stateRolledBack, installed: []string{"1.0"}, storeAfter: "written by 1.0"},
		{name: "rebooted before the store's copy", running: "1.0", boot: "boot-2", resumed: true, state: stateRolledBack, installed: []string{"1.0"}, storeAfter: "written by 1.0"},
		{name: "same boot", running: "2.0", boot: "boot-1", copied: true, state: statePending, storeAfter: "migrated by 2.0"},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir, store := t.TempDir(), filepath.Join(t.TempDir(), "swmgr.db")
			a := Activation{ID: "i1", From: "1.0", To: "2.0", Deadline: time.Hour, Started: time.Now().Add(-time.Minute), State: statePending, Boot: "boot-1"}
			if err := writeActivation(dir, a); err != nil {
				t.Fatal(err)
			}
			if c.copied {
				os.WriteFile(storeCopy(dir, a.ID), []byte("written by 1.0"), 0o600)
				os.WriteFile(store, []byte("migrated by 2.0"), 0o600)
			} else {
				os.WriteFile(store, []byte("written by 1.0"), 0o600)
			}
			got, resumed, err := ResumeInterrupted(dir, c.running, c.boot, time.Now())
			if err != nil || resumed != c.resumed {
				t.Fatalf("resume: %+v %v %v, want resumed %v", got, resumed, err, c.resumed)
			}
			if resumed {
				if c.ready {
					if ok, err := ConfirmActivation(dir, c.running); !ok || err != nil {
						t.Fatalf("confirm: %v %v", ok, err)
					}
				}
				in := &recordingInstaller{dir: dir}
				var stops int
				carrier := in.carrier(log)
				carrier.Store, carrier.Stop = store, func(context.Context) error { stops++; return nil }
				ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
				defer cancel()
				done, err := CarryOutActivation(ctx, dir, carrier)
				if err != nil || done.State != c.state || !slices.Equal(in.installed, c.installed) {
					t.Fatalf("carried out: %+v %v, installed %v; want %s, installed %v", done, err, in.installed, c.state, c.installed)
				}
				if c.state == stateRolledBack && !strings.Contains(done.Message, "a reboot interrupted the activation before swmgr 2.0 ran") {
					t.Errorf("message %q", done.Message)
				}
			}
			if rec, _ := readActivation(dir); rec.State != c.state {
				t.Errorf("recorded %+v, want %s", rec, c.state)
			}
			if b, _ := os.ReadFile(store); string(b) != c.storeAfter {
				t.Errorf("store %q, want %q", b, c.storeAfter)
			}
		})
	}
}

// With a signing key set, Install keeps a package signed by it and
// refuses (INTEGRITY_FAIL, nothing kept) one unsigned, one signed by
// another key and one changed after it was signed; a kept unsigned
// package is received again rather than taken as kept, and Activate
// refuses it. Without a key a signed package installs as any other.
func TestOSInstallSigned(t *testing.T) {
	privPEM, pubPEM, err := debsig.GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	priv, _ := debsig.ParsePrivateKey(privPEM)
	pub, _ := debsig.ParsePublicKey(pubPEM)
	otherPEM, _, _ := debsig.GenerateKey()
	other, _ := debsig.ParsePrivateKey(otherPEM)
	sign := func(deb []byte, k ed25519.PrivateKey) []byte {
		t.Helper()
		b, err := debsig.Sign(deb, k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	unsigned := buildDeb(t, PackageName, "2.0", 1000, false)
	signed := sign(unsigned, priv)
	byOther := sign(unsigned, other)
	tampered := append([]byte{}, signed...)
	tampered[len(magicAndFirstMember)+100] ^= 1 // in the control archive

	dir := filepath.Join(t.TempDir(), "packages")
	h := newOSHarness(t, "1.0", OSOptions{Dir: dir, SigningKey: pub, Activate: func(context.Context, string, Activation) error { return nil }})
	for name, content := range map[string][]byte{"unsigned": unsigned, "another key": byOther, "tampered": tampered} {
		r := h.install(t, &ospb.TransferRequest{Version: "2.0"}, content, true)
		if r.err.GetType() != ospb.InstallError_INTEGRITY_FAIL || !strings.Contains(r.err.GetDetail(), "signature") || r.validated != nil {
			t.Errorf("%s: %+v", name, r)
		}
		if left, _ := os.ReadDir(dir); len(left) != 0 {
			t.Errorf("%s: left %v", name, left)
		}
	}
	if r := h.install(t, &ospb.TransferRequest{Version: "2.0"}, signed, true); r.validated.GetVersion() != "2.0" {
		t.Fatalf("signed: %+v", r)
	}
	if r := h.install(t, &ospb.TransferRequest{Version: "2.0"}, nil, true); r.validated.GetVersion() != "2.0" || r.ready {
		t.Errorf("signed, kept: %+v", r)
	}

	// Kept unsigned before the key was set.
	os.WriteFile(filepath.Join(dir, packageFile("3.0")), buildDeb(t, PackageName, "3.0", 1000, false), 0o600)
	os.WriteFile(filepath.Join(dir, packageFile("1.0")), sign(buildDeb(t, PackageName, "1.0", 1000, false), priv), 0o600)
	if r := h.install(t, &ospb.TransferRequest{Version: "3.0"}, sign(buildDeb(t, PackageName, "3.0", 1000, false), other), true); !r.ready || r.err.GetType() != ospb.InstallError_INTEGRITY_FAIL {
		t.Errorf("kept unsigned: not received again: %+v", r)
	}
	if _, err := h.client.Activate(context.Background(), &ospb.ActivateRequest{Version: "3.0"}); status.Code(err) != codes.FailedPrecondition || !strings.Contains(err.Error(), "signed") {
		t.Errorf("activate of a kept unsigned package: %v", err)
	}
	if r, err := h.client.Activate(context.Background(), &ospb.ActivateRequest{Version: "2.0"}); err != nil || r.GetActivateOk() == nil {
		t.Errorf("activate of a signed package: %v %v", r, err)
	}

	h2 := newOSHarness(t, "1.0", OSOptions{})
	if r := h2.install(t, &ospb.TransferRequest{Version: "2.0"}, signed, true); r.validated.GetVersion() != "2.0" {
		t.Errorf("signed, no key set: %+v", r)
	}
}

// magicAndFirstMember is the ar magic, the header of debian-binary and
// its 4 bytes: what precedes the control archive's header in a .deb.
const magicAndFirstMember = "!<arch>\n" + "debian-binary   0           0     0     100644  4         `\n" + "2.0\n"
