package test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	fpb "github.com/openconfig/gnoi/file"
	ospb "github.com/openconfig/gnoi/os"
	"google.golang.org/grpc/codes"

	"github.com/swmgr/swmgr/internal/gnoi/debtest"
	"github.com/swmgr/swmgr/internal/testneed"
)

// installPackage streams deb to OS.Install with version and returns the
// last answer.
func installPackage(ctx context.Context, c ospb.OSClient, version string, deb []byte) (*ospb.InstallResponse, error) {
	st, err := c.Install(ctx)
	if err != nil {
		return nil, err
	}
	// A Send that fails (io.EOF: the stream ended, a refusal) leaves the
	// status to Recv.
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferRequest{TransferRequest: &ospb.TransferRequest{Version: version}}})
	r, err := st.Recv()
	if err != nil || r.GetTransferReady() == nil {
		return r, err
	}
	for b := deb; len(b) > 0; {
		n := min(len(b), 64<<10)
		if err := st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferContent{TransferContent: b[:n]}}); err != nil {
			break
		}
		b = b[n:]
	}
	st.Send(&ospb.InstallRequest{Request: &ospb.InstallRequest_TransferEnd{TransferEnd: &ospb.TransferEnd{}}})
	last, err := recvAll(st.Recv)
	if len(last) == 0 {
		return nil, err
	}
	return last[len(last)-1], err
}

// OS against the real binary: admins only; Install keeps a package in
// the data directory's package area, which File cannot reach; Verify
// answers the running version; Activate refuses while the running
// version's own package is not kept (here a development build, whose
// version is no Debian version); each change is in the config log.
func TestGNOIOS(t *testing.T) {
	testneed.Program(t, "dpkg", "dpkg-deb")
	g := startGNOIServer(t)
	g.expect(t, 201, "POST", "/config/User", `{"Name":"op1","Group":"operator","Password":"operator-pass-1"}`)
	c, files := ospb.NewOSClient(g.conn), fpb.NewFileClient(g.conn)
	op, admin := as(t, "op1", "operator-pass-1"), asAdmin(t)
	deb := debtest.Build(t, "swmgr", "9.9.9", []byte("#!/bin/sh\nexit 1\n"))

	_, err := c.Verify(op, &ospb.VerifyRequest{})
	wantCode(t, "an operator's Verify", err, codes.PermissionDenied)
	_, err = c.Activate(op, &ospb.ActivateRequest{Version: "9.9.9"})
	wantCode(t, "an operator's Activate", err, codes.PermissionDenied)
	_, err = installPackage(op, c, "9.9.9", deb)
	wantCode(t, "an operator's Install", err, codes.PermissionDenied)
	_, err = installPackage(as(t, "", ""), c, "9.9.9", deb)
	wantCode(t, "an Install without credentials", err, codes.Unauthenticated)

	v, err := c.Verify(admin, &ospb.VerifyRequest{})
	if err != nil || !strings.HasPrefix(v.GetVersion(), "dev") || v.GetActivationFailMessage() != "" {
		t.Fatalf("Verify: %v %v", v, err)
	}
	r, err := installPackage(admin, c, "9.9.9", deb)
	if err != nil || r.GetValidated().GetVersion() != "9.9.9" {
		t.Fatalf("Install: %v %v", r, err)
	}
	kept := filepath.Join(g.dir, "packages", "swmgr_9.9.9.deb")
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the package is not kept: %v", err)
	}
	st, err := files.Get(admin, &fpb.GetRequest{RemoteFile: "/config/packages/swmgr_9.9.9.deb"})
	if err == nil {
		_, err = recvAll(st.Recv)
	}
	wantCode(t, "File.Get of a kept package", err, codes.PermissionDenied)

	a, err := c.Activate(admin, &ospb.ActivateRequest{Version: "9.9.8"})
	if err != nil || a.GetActivateError().GetType() != ospb.ActivateError_NON_EXISTENT_VERSION {
		t.Errorf("Activate of a version not kept: %v %v", a, err)
	}
	_, err = c.Activate(admin, &ospb.ActivateRequest{Version: "9.9.9"})
	wantCode(t, "Activate while the running version's package is not kept", err, codes.FailedPrecondition)

	logs := g.expect(t, 200, "GET", "/state/ConfigLogs?Count=1000", "")
	for _, want := range []string{`"Operation":"Install","Data":"{\"installed\":\"9.9.9\"`, `"Operation":"Activate"`} {
		if !strings.Contains(string(logs.raw), want) {
			t.Errorf("the config log has no %s", want)
		}
	}
}

// Signed packages end to end: `swmgr package keygen` makes a key pair,
// `swmgr package sign` signs a .deb (dpkg-deb still reads it, and
// `swmgr package verify` accepts it), and a swmgr serving with
// --os-signing-key keeps that package over OS.Install and refuses the
// unsigned one and one changed after signing (INTEGRITY_FAIL: nothing
// kept).
func TestGNOIOSSignedInstall(t *testing.T) {
	testneed.Program(t, "dpkg", "dpkg-deb")
	dir := t.TempDir()
	priv, pub := filepath.Join(dir, "sign.key"), filepath.Join(dir, "sign.pub")
	swmgr := func(args ...string) string {
		t.Helper()
		out, err := exec.Command(swmgrBin, args...).CombinedOutput()
		if err != nil {
			t.Fatalf("swmgr %s: %v: %s", strings.Join(args, " "), err, out)
		}
		return string(out)
	}
	swmgr("package", "keygen", "--private", priv, "--public", pub)
	if fi, err := os.Stat(priv); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("private key: %v %v", fi, err)
	}
	unsigned := debtest.Build(t, "swmgr", "9.9.9", []byte("#!/bin/sh\nexit 1\n"))
	debFile, signedFile := filepath.Join(dir, "u.deb"), filepath.Join(dir, "s.deb")
	os.WriteFile(debFile, unsigned, 0o644)
	swmgr("package", "sign", "--key", priv, "--out", signedFile, debFile)
	if out, err := exec.Command("dpkg-deb", "--field", signedFile, "Version").CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "9.9.9" {
		t.Fatalf("dpkg-deb of the signed package: %v: %s", err, out)
	}
	swmgr("package", "verify", "--key", pub, signedFile)
	if out, err := exec.Command(swmgrBin, "package", "verify", "--key", pub, debFile).CombinedOutput(); err == nil || !strings.Contains(string(out), "not signed") {
		t.Errorf("verify of the unsigned package: %v: %s", err, out)
	}
	signed, _ := os.ReadFile(signedFile)
	tampered := append([]byte{}, signed...)
	tampered[len(tampered)/2] ^= 1

	g := startGNOIServer(t, "--os-signing-key", pub)
	c, admin := ospb.NewOSClient(g.conn), asAdmin(t)
	kept := filepath.Join(g.dir, "packages", "swmgr_9.9.9.deb")
	for name, deb := range map[string][]byte{"unsigned": unsigned, "tampered": tampered} {
		r, err := installPackage(admin, c, "9.9.9", deb)
		if err != nil || r.GetInstallError().GetType() != ospb.InstallError_INTEGRITY_FAIL {
			t.Errorf("%s: %v %v", name, r, err)
		}
		if _, err := os.Stat(kept); err == nil {
			t.Fatalf("%s: kept", name)
		}
	}
	r, err := installPackage(admin, c, "9.9.9", signed)
	if err != nil || r.GetValidated().GetVersion() != "9.9.9" {
		t.Fatalf("signed: %v %v", r, err)
	}
	if _, err := os.Stat(kept); err != nil {
		t.Fatalf("the signed package is not kept: %v", err)
	}
}

// A start of the binary after a reboot finds the activation the reboot
// ended (pending, of another boot) and resumes it at once: here the
// version starting is not the activation's new one, so its carrier is to
// put the previous one back now (the record says so, of this boot); with
// no systemd on this machine the carrier cannot start, which is logged.
func TestGNOIOSResumesAnActivationAfterAReboot(t *testing.T) {
	dir := t.TempDir()
	pkgs := filepath.Join(dir, "packages")
	if err := os.MkdirAll(pkgs, 0o700); err != nil {
		t.Fatal(err)
	}
	rec := `{"id":"r1","from":"9.9.8","to":"9.9.9","deadline":120000000000,"started":"2026-01-01T00:00:00Z","state":"pending","boot":"a-boot-before"}`
	if err := os.WriteFile(filepath.Join(pkgs, "activation.json"), []byte(rec), 0o600); err != nil {
		t.Fatal(err)
	}
	s := startServer(t, dir, "--gnmi", freeAddr(t))
	waitLine(t, s.logs, `os: a reboot interrupted the activation: resuming it.*to=9\.9\.9.*how=roll-back`)
	b, err := os.ReadFile(filepath.Join(pkgs, "activation.json"))
	boot, _ := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil || !strings.Contains(string(b), `"resume": "roll-back"`) || !strings.Contains(string(b), strings.TrimSpace(string(boot))) {
		t.Errorf("the record after the start: %s %v", b, err)
	}
	if _, err := os.Stat("/run/systemd/system"); err != nil {
		waitLine(t, s.logs, `os: cannot resume the activation`)
	}
}
