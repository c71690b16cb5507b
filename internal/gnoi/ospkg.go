package gnoi

import (
	"archive/tar"
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/ed25519"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	ospb "github.com/openconfig/gnoi/os"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/debsig"
)

// DefaultMaxPackage bounds a package OS.Install receives.
const DefaultMaxPackage = 256 << 20

// DefaultKeepPackages is how many packages the package directory keeps:
// an Install that would leave more removes the oldest (never the running
// version's, nor one an activation may still need).
const DefaultKeepPackages = 3

// tempPattern names a package being received.
const tempPattern = ".install-*.deb"

// PackageName is the Debian package OS.Install accepts.
const PackageName = "swmgr"

// progressEvery is how many bytes an Install receives between two
// TransferProgress messages.
const progressEvery = 1 << 20

// OSOptions configure gNOI's OS service: where packages are kept and how
// one is activated.
type OSOptions struct {
	// Dir keeps the packages (swmgr_<version>.deb) and the activation's
	// record; "": OS is Unimplemented.
	Dir string
	// MaxPackage bounds a package; 0: DefaultMaxPackage.
	MaxPackage int64
	// Keep is how many packages Dir keeps; 0: DefaultKeepPackages.
	Keep int
	// Activate starts an activation (Activation, activation.go) and
	// returns: what installs the package and restarts swmgr into it runs
	// apart from this swmgr, which it replaces. nil: Activate is
	// Unimplemented.
	Activate Activator
	// Deadline is how long a new version has, once installed, to be
	// ready before the previous one is put back; 0: DefaultActivateDeadline.
	Deadline time.Duration
	// SigningKey, when set, is the key a package must be signed with
	// (package debsig: swmgr package sign) for Install to keep it and
	// Activate to install it; nil: signatures are not checked.
	SigningKey ed25519.PublicKey
}

// osServer serves gNOI's OS service.
type osServer struct {
	ospb.UnimplementedOSServer
	s *Server
}

// osPackages is the package directory: the stored packages and the one
// Install at a time.
type osPackages struct {
	o          OSOptions
	installing sync.Mutex
}

// debVersion is what a Debian version may hold (Debian policy 5.6.12),
// which is also safe in a file name.
var debVersion = regexp.MustCompile(`^[0-9][A-Za-z0-9.+~:-]*$`)

// packageFile is the name a version's package is kept under.
func packageFile(version string) string { return PackageName + "_" + version + ".deb" }

// path is the stored package of version, and whether it is there.
func (p *osPackages) path(version string) (string, bool) {
	if !debVersion.MatchString(version) {
		return "", false
	}
	path := filepath.Join(p.o.Dir, packageFile(version))
	fi, err := os.Lstat(path)
	return path, err == nil && fi.Mode().IsRegular()
}

// installError ends an Install with its InstallError.
type installError struct {
	typ    ospb.InstallError_Type
	detail string
}

func (e *installError) Error() string { return e.typ.String() + ": " + e.detail }

func installErr(typ ospb.InstallError_Type, format string, args ...any) *installError {
	return &installError{typ: typ, detail: fmt.Sprintf(format, args...)}
}

// Install receives a package (os.proto: TransferRequest, TransferReady,
// the content with TransferProgress, TransferEnd, Validated), keeps it in
// the package directory under its own version, or answers Validated at
// once when the version asked for is kept already. An InstallError ends
// the stream (status OK, as os.proto says); a stream that breaks the
// protocol is InvalidArgument.
func (o osServer) Install(stream ospb.OS_InstallServer) error {
	s := o.s
	ctx := stream.Context()
	if s.pkgs == nil {
		return status.Error(codes.Unimplemented, "this swmgr does not install packages (no package directory)")
	}
	first, err := stream.Recv()
	if err != nil {
		return err
	}
	tr := first.GetTransferRequest()
	if tr == nil {
		return invalid("the first message of an Install is a transfer_request")
	}
	data := map[string]any{"version": tr.GetVersion(), "package_size": tr.GetPackageSize()}
	v, err := s.install(ctx, stream, tr)
	if err == nil {
		data["installed"] = v.version
	}
	// Recorded before the answer: a client that has its answer finds the
	// entry.
	s.record(ctx, "Install", data, err)
	var ie *installError
	switch {
	case errors.As(err, &ie):
		s.o.Log.Warn("os: install refused", "err", err)
		return stream.Send(&ospb.InstallResponse{Response: &ospb.InstallResponse_InstallError{InstallError: &ospb.InstallError{Type: ie.typ, Detail: ie.detail}}})
	case err != nil:
		return err
	}
	return stream.Send(&ospb.InstallResponse{Response: &ospb.InstallResponse_Validated{Validated: &ospb.Validated{Version: v.version, Description: v.description}}})
}

// validated is a kept package: its version and what Validated says of it.
type validated struct{ version, description string }

// install runs one Install after its TransferRequest: the version it
// keeps (or found kept), or why not.
func (s *Server) install(ctx context.Context, stream ospb.OS_InstallServer, tr *ospb.TransferRequest) (validated, error) {
	p := s.pkgs
	if !p.installing.TryLock() {
		return validated{}, installErr(ospb.InstallError_INSTALL_IN_PROGRESS, "another Install is running")
	}
	defer p.installing.Unlock()
	if tr.GetStandbySupervisor() {
		return validated{}, installErr(ospb.InstallError_NOT_SUPPORTED_ON_BACKUP, "the switch has one supervisor")
	}
	if v := tr.GetVersion(); v != "" {
		// A kept package not signed by the key (kept before the key was
		// set) is received again.
		if path, ok := p.path(v); ok && p.signed(path) == nil {
			s.o.Log.Info("os: package already kept", "version", v)
			return validated{v, "kept already"}, nil
		}
	}
	if size := tr.GetPackageSize(); size > uint64(p.o.MaxPackage) {
		return validated{}, installErr(ospb.InstallError_TOO_LARGE, "%d bytes: packages are at most %d", size, p.o.MaxPackage)
	} else if free, ok := freeBytes(p.o.Dir); ok && size > free {
		return validated{}, installErr(ospb.InstallError_TOO_LARGE, "%d bytes: %s has %d free", size, p.o.Dir, free)
	}
	if err := os.MkdirAll(p.o.Dir, 0o700); err != nil {
		return validated{}, status.Errorf(codes.Internal, "package directory: %v", err)
	}
	// What an Install cut short by a stop of swmgr left (one runs at a
	// time: none is being written now).
	if left, _ := filepath.Glob(filepath.Join(p.o.Dir, tempPattern)); len(left) > 0 {
		for _, f := range left {
			os.Remove(f)
		}
	}
	tmp, err := os.CreateTemp(p.o.Dir, tempPattern)
	if err != nil {
		return validated{}, status.Errorf(codes.Internal, "package directory: %v", err)
	}
	kept := false
	defer func() {
		if !kept {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if err := stream.Send(&ospb.InstallResponse{Response: &ospb.InstallResponse_TransferReady{TransferReady: &ospb.TransferReady{}}}); err != nil {
		return validated{}, err
	}
	if err := receivePackage(stream, tmp, p.o.MaxPackage); err != nil {
		return validated{}, err
	}
	if err := tmp.Sync(); err != nil {
		return validated{}, status.Errorf(codes.Internal, "package: %v", err)
	}
	if err := tmp.Close(); err != nil {
		return validated{}, status.Errorf(codes.Internal, "package: %v", err)
	}
	info, err := inspectDeb(ctx, tmp.Name(), p.signed)
	if err != nil {
		return validated{}, err
	}
	if tr.GetVersion() == "" && info.Version == s.o.Version {
		return validated{}, installErr(ospb.InstallError_INSTALL_RUN_PACKAGE, "swmgr %s is the version running", info.Version)
	}
	dst := filepath.Join(p.o.Dir, packageFile(info.Version))
	if err := os.Rename(tmp.Name(), dst); err != nil {
		return validated{}, status.Errorf(codes.Internal, "package: %v", err)
	}
	kept = true
	if err := atomicfile.SyncDir(p.o.Dir); err != nil {
		return validated{}, status.Errorf(codes.Internal, "package: %v", err)
	}
	s.o.Log.Info("os: package kept", "version", info.Version, "file", dst)
	s.prunePackages(info.Version)
	return validated{info.Version, fmt.Sprintf("%s %s (%s)", info.Package, info.Version, info.Architecture)}, nil
}

// receivePackage writes the stream's transfer_content to w until its
// TransferEnd, at most max bytes, with a TransferProgress every
// progressEvery bytes.
func receivePackage(stream ospb.OS_InstallServer, w io.Writer, max int64) error {
	var n, reported int64
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return status.Error(codes.Aborted, "the stream ended before its transfer_end: nothing kept")
		}
		if err != nil {
			return err
		}
		switch r := req.GetRequest().(type) {
		case *ospb.InstallRequest_TransferContent:
			if n+int64(len(r.TransferContent)) > max {
				return installErr(ospb.InstallError_TOO_LARGE, "more than %d bytes: packages are at most that", max)
			}
			if _, err := w.Write(r.TransferContent); err != nil {
				return status.Errorf(codes.Internal, "package: %v", err)
			}
			n += int64(len(r.TransferContent))
			if n-reported >= progressEvery {
				reported = n
				if err := stream.Send(&ospb.InstallResponse{Response: &ospb.InstallResponse_TransferProgress{TransferProgress: &ospb.TransferProgress{BytesReceived: uint64(n)}}}); err != nil {
					return err
				}
			}
		case *ospb.InstallRequest_TransferEnd:
			return nil
		default:
			return invalid("after the transfer_request an Install sends transfer_content, then transfer_end")
		}
	}
}

// freeBytes is the space free for root in dir's file system (or its
// parent's, when dir is not made yet).
func freeBytes(dir string) (uint64, bool) {
	var st syscall.Statfs_t
	for d := dir; ; d = filepath.Dir(d) {
		if err := syscall.Statfs(d, &st); err == nil {
			return st.Bfree * uint64(st.Bsize), true
		}
		if d == filepath.Dir(d) {
			return 0, false
		}
	}
}

// debInfo is what a package says of itself.
type debInfo struct {
	Package, Version, Architecture string
}

// debArch is the Debian architecture swmgr runs on.
func debArch() string {
	switch runtime.GOARCH {
	case "386":
		return "i386"
	case "arm":
		return "armhf"
	}
	return runtime.GOARCH
}

// signed checks the package in path against the signing key, if one is
// set: an InstallError INTEGRITY_FAIL when it is not signed by it.
func (p *osPackages) signed(path string) error {
	if p.o.SigningKey == nil {
		return nil
	}
	if err := debsig.VerifyFile(path, p.o.SigningKey); err != nil {
		return installErr(ospb.InstallError_INTEGRITY_FAIL, "signature (the signing key is set): %v", err)
	}
	return nil
}

// inspectDeb checks that path is a Debian package (an ar archive that
// starts with debian-binary: PARSE_FAIL otherwise), that signed accepts
// it (before dpkg-deb reads it), that it is swmgr's
// for this architecture and holds /usr/bin/swmgr (INCOMPATIBLE), and
// that its data archive reads to its end (INTEGRITY_FAIL: dpkg-deb
// checks the compression's checksums).
func inspectDeb(ctx context.Context, path string, signed func(path string) error) (debInfo, error) {
	head := make([]byte, 8+16)
	f, err := os.Open(path)
	if err != nil {
		return debInfo{}, status.Errorf(codes.Internal, "package: %v", err)
	}
	_, err = io.ReadFull(f, head)
	f.Close()
	if err != nil || string(head[:8]) != "!<arch>\n" || strings.TrimRight(string(head[8:]), " /") != "debian-binary" {
		return debInfo{}, installErr(ospb.InstallError_PARSE_FAIL, "not a Debian package (an ar archive starting with debian-binary)")
	}
	if err := signed(path); err != nil {
		return debInfo{}, err
	}
	out, err := exec.CommandContext(ctx, "dpkg-deb", "--field", path, "Package", "Version", "Architecture").Output()
	if err != nil {
		return debInfo{}, installErr(ospb.InstallError_PARSE_FAIL, "dpkg-deb --field: %v%s", err, stderrOf(err))
	}
	var info debInfo
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Package":
			info.Package = v
		case "Version":
			info.Version = v
		case "Architecture":
			info.Architecture = v
		}
	}
	if info.Package != PackageName {
		return info, installErr(ospb.InstallError_INCOMPATIBLE, "package %q is not %s", info.Package, PackageName)
	}
	if !debVersion.MatchString(info.Version) {
		return info, installErr(ospb.InstallError_PARSE_FAIL, "version %q is not a Debian version", info.Version)
	}
	if a := info.Architecture; a != debArch() && a != "all" {
		return info, installErr(ospb.InstallError_INCOMPATIBLE, "architecture %s: this switch is %s", a, debArch())
	}
	if err := holdsBinary(ctx, path); err != nil {
		return info, err
	}
	return info, nil
}

// holdsBinary reads the package's data archive to its end (dpkg-deb
// --fsys-tarfile) and finds ./usr/bin/swmgr in it.
func holdsBinary(ctx context.Context, path string) error {
	cmd := exec.CommandContext(ctx, "dpkg-deb", "--fsys-tarfile", path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return status.Errorf(codes.Internal, "dpkg-deb: %v", err)
	}
	if err := cmd.Start(); err != nil {
		return status.Errorf(codes.Internal, "dpkg-deb: %v", err)
	}
	var names []string
	tr := tar.NewReader(out)
	var terr error
	for {
		h, err := tr.Next()
		if err != nil {
			if err != io.EOF {
				terr = err
			}
			break
		}
		names = append(names, strings.TrimPrefix(h.Name, "."))
	}
	io.Copy(io.Discard, out)
	if err := cmd.Wait(); err != nil || terr != nil {
		return installErr(ospb.InstallError_INTEGRITY_FAIL, "its data archive does not read to its end: %v %v %s", err, terr, strings.TrimSpace(stderr.String()))
	}
	if !slices.Contains(names, "/usr/bin/"+PackageName) {
		return installErr(ospb.InstallError_INCOMPATIBLE, "the package holds no /usr/bin/%s", PackageName)
	}
	return nil
}

// stderrOf is an exec.ExitError's standard error, after ": ".
func stderrOf(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return ": " + strings.TrimSpace(string(ee.Stderr))
	}
	return ""
}

// prunePackages removes the oldest kept packages beyond Keep, never the
// running version's, the one just kept, nor those of an activation
// still under way.
func (s *Server) prunePackages(kept string) {
	p := s.pkgs
	ents, err := os.ReadDir(p.o.Dir)
	if err != nil {
		return
	}
	protect := map[string]bool{packageFile(kept): true, packageFile(s.o.Version): true}
	if rec, err := readActivation(p.o.Dir); err == nil && rec.State == statePending {
		protect[packageFile(rec.From)], protect[packageFile(rec.To)] = true, true
	}
	type kept1 struct {
		name string
		mod  int64
	}
	var all []kept1
	for _, e := range ents {
		if !e.Type().IsRegular() || !strings.HasPrefix(e.Name(), PackageName+"_") || !strings.HasSuffix(e.Name(), ".deb") {
			continue
		}
		fi, err := e.Info()
		if err != nil {
			continue
		}
		all = append(all, kept1{e.Name(), fi.ModTime().UnixNano()})
	}
	slices.SortFunc(all, func(a, b kept1) int { return cmp.Compare(b.mod, a.mod) })
	room := p.o.Keep
	for _, k := range all {
		if protect[k.name] {
			room--
		}
	}
	for _, k := range all {
		if protect[k.name] {
			continue
		}
		if room > 0 {
			room--
			continue
		}
		if err := os.Remove(filepath.Join(p.o.Dir, k.name)); err == nil {
			s.o.Log.Info("os: old package removed", "file", k.name)
		}
	}
}
