package intent_test

import (
	"crypto/ecdsa"
	"crypto/ed25519"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/swmgr/swmgr/internal/intent/intenttest"
)

// testCA is a CA of the test's own that signs its HTTPS servers.
type testCA struct {
	cert *x509.Certificate
	key  *ecdsa.PrivateKey
}

func newTestCA(t *testing.T, name string) *testCA {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	return &testCA{cert: cert, key: key}
}

// base64 is the CA as CACertificates holds it.
func (ca *testCA) base64() string { return base64.StdEncoding.EncodeToString(ca.cert.Raw) }

// serveTLS starts h over HTTPS on 127.0.0.1 with a certificate ca signs.
func (ca *testCA) serveTLS(t *testing.T, h http.Handler) *httptest.Server {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "intent server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.cert, &key.PublicKey, ca.key)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshakes
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{{Certificate: [][]byte{der}, PrivateKey: key}}}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return srv
}

// gitHTTP serves the repositories under root over git's smart HTTP (git
// http-backend as a CGI program) at /git/, to basic authentication as
// user with password only. While it answers (the switch's git is running)
// it looks for the password on every process's command line: leaked, if
// any, is told the first command line that holds it.
func gitHTTP(root, user, password string, leaked chan<- string) http.Handler {
	backend := &cgi.Handler{Path: "/usr/lib/git-core/git-http-backend", Root: "/git",
		Env: []string{"GIT_PROJECT_ROOT=" + root, "GIT_HTTP_EXPORT_ALL=1", "GIT_CONFIG_NOSYSTEM=1", "HOME=" + root}}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if cmdline := commandLineHolding(inClear(user, password)); cmdline != "" {
			select {
			case leaked <- cmdline:
			default:
			}
		}
		if u, p, ok := r.BasicAuth(); !ok || u != user || p != password {
			w.Header().Set("WWW-Authenticate", `Basic realm="git"`)
			http.Error(w, "who are you", http.StatusUnauthorized)
			return
		}
		backend.ServeHTTP(w, r)
	})
}

// inClear are the forms a basic password would be seen in: itself, and
// base64 of user:password (an Authorization header's).
func inClear(user, password string) []string {
	return []string{password, base64.StdEncoding.EncodeToString([]byte(user + ":" + password))}
}

func holdsAny(b []byte, secrets []string) bool {
	for _, s := range secrets {
		if strings.Contains(string(b), s) {
			return true
		}
	}
	return false
}

// commandLineHolding is the first process command line that holds one of
// secrets, "" when none does.
func commandLineHolding(secrets []string) string {
	procs, _ := filepath.Glob("/proc/[0-9]*/cmdline")
	for _, p := range procs {
		if b, err := os.ReadFile(p); err == nil && holdsAny(b, secrets) {
			return strings.ReplaceAll(string(b), "\x00", " ")
		}
	}
	return ""
}

// filesHolding lists the files under dir that hold one of secrets.
func filesHolding(dir string, secrets []string) []string {
	var found []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() {
			if b, err := os.ReadFile(p); err == nil && holdsAny(b, secrets) {
				found = append(found, p)
			}
		}
		return nil
	})
	return found
}

// TestIntentFollowsAGitRepository: a document in a git repository (over
// file://) at a branch is applied as a commit of source intent, verified
// by its signature at the same commit, the commit id in the state; a new
// commit on the branch lands within one poll interval.
func TestIntentFollowsAGitRepository(t *testing.T) {
	repo := intenttest.NewRepository(t)
	first := repo.CommitSigned("switches/leaf1.json", document(`{"VlanId":100,"Description":"from git"}`))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"switches/leaf1.json","TargetRevision":"main","Interval":5,"PublicKey":%q}`,
		"file://"+repo.Dir, repo.PublicKey()))
	eventually(t, "the intent applied from git", 20*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
	var st map[string]any
	eventually(t, "the commit shown", 10*time.Second, func() bool {
		st = s.first("/state/IntentSources")
		return st["AppliedCommit"] == first
	})
	if st["Verified"] != "signature" || st["Commit"] != first || st["LastError"] != "" {
		t.Fatalf("IntentSource state: %v", st)
	}
	rev := s.must("GET", fmt.Sprintf("/revisions/%v", st["AppliedRevision"]), "")
	if rev["Source"] != "intent" || !strings.Contains(fmt.Sprint(rev["Comment"]), first[:12]) {
		t.Fatalf("the intent's commit: %v", rev)
	}
	// Each commit of the intent awaits confirmation (the repository
	// answering again): until then the switch accepts no other change.
	confirmed := func(what string) {
		t.Helper()
		eventually(t, what+" confirmed", 20*time.Second, func() bool {
			return s.must("GET", "/revisions/pending", "")["Awaiting"] == false
		})
	}
	confirmed("the intent's commit")

	// A new commit lands within one poll interval (5 s; the wait is
	// generous, the time taken is logged).
	committed := time.Now()
	second := repo.CommitSigned("switches/leaf1.json", document(`{"VlanId":200}`))
	eventually(t, "the new commit applied", 20*time.Second, func() bool { return sameVlans(s.vlans(), 200) })
	t.Logf("a new commit applied %v after it was made (Interval 5 s)", time.Since(committed).Round(100*time.Millisecond))
	eventually(t, "the new commit shown", 10*time.Second, func() bool { return s.first("/state/IntentSources")["AppliedCommit"] == second })
	confirmed("the new commit")

	// A commit id as the target, then an annotated tag.
	s.must("PATCH", "/config/IntentSource", fmt.Sprintf(`{"Name":"default","TargetRevision":%q}`, first))
	eventually(t, "the first commit applied again", 20*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
	confirmed("the first commit again")
	repo.Git("tag", "-a", "-m", "release 1", "release-1", second)
	s.must("PATCH", "/config/IntentSource", `{"Name":"default","TargetRevision":"release-1"}`)
	eventually(t, "the tagged commit applied", 20*time.Second, func() bool { return sameVlans(s.vlans(), 200) })
	if st := s.first("/state/IntentSources"); st["AppliedCommit"] != second {
		t.Fatalf("at the tag: %v", st)
	}
}

// TestIntentGitOverHTTPSWithItsCA: a repository served over git's smart
// HTTP, HTTPS signed by a CA of the test's own given in CACertificates,
// with basic authentication whose password is a sealed secret: applied.
// The same server checked against another CA is refused with the reason,
// and so is a plain HTTPS intent; nothing changes.
func TestIntentGitOverHTTPSWithItsCA(t *testing.T) {
	repo := intenttest.NewRepository(t)
	commit := repo.CommitSigned("leaf1.json", document(`{"VlanId":100}`))
	ca, other := newTestCA(t, "intent CA"), newTestCA(t, "another CA")
	leaked := make(chan string, 1)
	srv := ca.serveTLS(t, gitHTTP(filepath.Dir(repo.Dir), "fleet", "s3cret-git-password", leaked))
	dataDir := t.TempDir()
	s := startSwitchIn(t, dataDir)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"leaf1.json","TargetRevision":"main","Interval":3600,"Username":"fleet","Password":"s3cret-git-password","PublicKey":%q,"CACertificates":[%q]}`,
		srv.URL+"/git/intent.git", repo.PublicKey(), ca.base64()))
	eventually(t, "the intent applied over HTTPS", 20*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
	eventually(t, "the commit shown", 10*time.Second, func() bool { return s.first("/state/IntentSources")["AppliedCommit"] == commit })
	if got := s.first("/config/IntentSources"); got["Password"] != "" {
		t.Fatalf("the password is read back: %v", got)
	}
	select {
	case cmdline := <-leaked:
		t.Fatalf("the password is on a command line while git fetches: %s", cmdline)
	default:
	}
	if files := filesHolding(dataDir, inClear("fleet", "s3cret-git-password")); len(files) > 0 {
		t.Fatalf("the password is in clear in %v", files)
	}

	// A poll told by IntentFetch: the fetch over HTTPS, the signature's
	// check, the commit and its confirmation by the repository answering
	// again (the time taken is logged).
	second := repo.CommitSigned("leaf1.json", document(`{"VlanId":200}`))
	asked := time.Now()
	s.must("POST", "/action/IntentFetch", `{}`)
	t.Logf("IntentFetch of a new commit over HTTPS, applied and confirmed: %v", time.Since(asked).Round(time.Millisecond))
	if st := s.first("/state/IntentSources"); !sameVlans(s.vlans(), 200) || st["AppliedCommit"] != second {
		t.Fatalf("after IntentFetch: VLANs %v, state %v", s.vlans(), st)
	}

	before := s.revision()
	repo.CommitSigned("leaf1.json", document(`{"VlanId":300}`))
	s.must("PATCH", "/config/IntentSource", fmt.Sprintf(`{"Name":"default","CACertificates":[%q]}`, other.base64()))
	before++ // the PATCH's own commit
	code, m := s.do("POST", "/action/IntentFetch", `{}`)
	if code != http.StatusBadGateway || !strings.Contains(fmt.Sprint(m), "not signed by the IntentSource's CACertificates") {
		t.Fatalf("IntentFetch from a server another CA signed: %d %v", code, m)
	}
	t.Logf("another CA: %v", m["Error"])
	if !strings.Contains(fmt.Sprint(s.first("/state/IntentSources")["LastError"]), "certificate") || s.revision() != before || !sameVlans(s.vlans(), 200) {
		t.Fatalf("refused: state %v, revision %v (want %v), VLANs %v", s.first("/state/IntentSources"), s.revision(), before, s.vlans())
	}

	// A wrong password: refused by the server, nothing changed.
	s.must("PATCH", "/config/IntentSource", fmt.Sprintf(`{"Name":"default","CACertificates":[%q],"Password":"wrong"}`, ca.base64()))
	before++
	if code, m := s.do("POST", "/action/IntentFetch", `{}`); code != http.StatusBadGateway || s.revision() != before || !strings.Contains(fmt.Sprint(m), "the server refused the IntentSource's Username and Password") {
		t.Fatalf("IntentFetch with a wrong password: %d %v, revision %v want %v", code, m, s.revision(), before)
	} else {
		t.Logf("a wrong password: %v", m["Error"])
	}
}

// TestIntentHTTPSWithItsCA: a plain HTTPS intent checked against the
// IntentSource's CACertificates: applied when its CA signs the server,
// refused with the reason when another does.
func TestIntentHTTPSWithItsCA(t *testing.T) {
	ca, other := newTestCA(t, "intent CA"), newTestCA(t, "another CA")
	_, key, _ := ed25519.GenerateKey(rand.Reader)
	doc := document(`{"VlanId":100}`)
	sig := base64.StdEncoding.EncodeToString(ed25519.Sign(key, doc))
	srv := ca.serveTLS(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/intent.json":
			w.Write(doc)
		case "/intent.json.sig":
			w.Write([]byte(sig))
		default:
			http.NotFound(w, r)
		}
	}))
	pub := base64.StdEncoding.EncodeToString(key.Public().(ed25519.PublicKey))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"URL":%q,"Interval":3600,"PublicKey":%q,"CACertificates":[%q]}`, srv.URL+"/intent.json", pub, other.base64()))
	eventually(t, "refused", 20*time.Second, func() bool { return s.first("/state/IntentSources")["Refused"].(float64) > 0 })
	if msg := fmt.Sprint(s.first("/state/IntentSources")["LastError"]); !strings.Contains(msg, "not signed by one of the IntentSource's CACertificates") {
		t.Fatalf("LastError %q does not say the CA", msg)
	}
	if !sameVlans(s.vlans()) {
		t.Fatalf("a refused intent changed the VLANs: %v", s.vlans())
	}
	s.must("PATCH", "/config/IntentSource", fmt.Sprintf(`{"Name":"default","CACertificates":[%q]}`, ca.base64()))
	eventually(t, "applied with its CA", 20*time.Second, func() bool { return sameVlans(s.vlans(), 100) })
}

// TestIntentGitRefusals: a ref that is not in the repository, an unsigned
// or wrongly signed document, a missing file are refused with the reason
// in the state and nothing changed; hostile URLs, refs and paths are
// refused when written (400), nothing changed.
func TestIntentGitRefusals(t *testing.T) {
	repo := intenttest.NewRepository(t)
	repo.CommitSigned("leaf1.json", document(`{"VlanId":100}`))
	s := startSwitch(t)
	s.must("POST", "/config/IntentSource", fmt.Sprintf(`{"RepoURL":%q,"Path":"leaf1.json","TargetRevision":"main","Interval":3600,"PublicKey":%q}`,
		"file://"+repo.Dir, repo.PublicKey()))
	eventually(t, "the intent applied", 20*time.Second, func() bool { return sameVlans(s.vlans(), 100) })

	_, other, _ := ed25519.GenerateKey(rand.Reader)
	repo.Git("checkout", "-q", "-b", "unsigned")
	repo.Commit(map[string][]byte{"leaf1.json": document(`{"VlanId":400}`), "leaf1.json.sig": nil})
	repo.Git("checkout", "-q", "-b", "badsig")
	repo.Commit(map[string][]byte{"leaf1.json.sig": []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(other, document(`{"VlanId":400}`))))})
	repo.Git("checkout", "-q", "-b", "invalid")
	bad := []byte(`{"ConfigData":{"Vlan":[{"VlanId":"x"}]}}`)
	repo.Commit(map[string][]byte{"leaf1.json": bad, "leaf1.json.sig": []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(repo.Key, bad)))})
	repo.Git("checkout", "-q", "main")
	if err := os.Symlink("leaf1.json", filepath.Join(repo.Dir, "link.json")); err != nil {
		t.Fatal(err)
	}
	repo.Commit(map[string][]byte{"dir/x.json": []byte("{}")})

	for _, tc := range []struct{ name, patch, why string }{
		{"a ref not in the repository", `"TargetRevision":"no-such-branch"`, "couldn't find remote ref no-such-branch"},
		{"a commit not in the repository", `"TargetRevision":"0123456789abcdef0123456789abcdef01234567"`, "git fetch"},
		{"no signature at the commit", `"TargetRevision":"unsigned"`, "signature: no leaf1.json.sig at commit"},
		{"signed by another key", `"TargetRevision":"badsig"`, "bad signature"},
		{"an invalid document", `"TargetRevision":"invalid"`, "the document was refused, nothing changed"},
		{"no such file", `"TargetRevision":"main","Path":"leaf2.json"`, "has no file leaf2.json"},
		{"a symbolic link", `"TargetRevision":"main","Path":"link.json"`, "is not a regular file (mode 120000, blob)"},
		{"a directory", `"TargetRevision":"main","Path":"dir"`, "is not a regular file (mode 040000, tree)"},
		{"a glob", `"TargetRevision":"main","Path":"leaf*.json"`, "has no file leaf*.json"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			s.must("PATCH", "/config/IntentSource", `{"Name":"default",`+tc.patch+`}`)
			before := s.revision()
			code, m := s.do("POST", "/action/IntentFetch", `{}`)
			if code != http.StatusBadGateway || !strings.Contains(fmt.Sprint(m), tc.why) {
				t.Fatalf("IntentFetch: %d %v, want 502 saying %q", code, m, tc.why)
			}
			msg := fmt.Sprint(s.first("/state/IntentSources")["LastError"])
			if !strings.Contains(msg, tc.why) {
				t.Fatalf("LastError %q does not say %q", msg, tc.why)
			}
			t.Logf("LastError: %s", msg)
			if s.revision() != before || !sameVlans(s.vlans(), 100) {
				t.Fatalf("a refused intent changed the switch: revision %v -> %v, VLANs %v", before, s.revision(), s.vlans())
			}
		})
	}

	// A repository larger than RepoSizeLimit: refused, its cache removed.
	t.Run("a repository over RepoSizeLimit", func(t *testing.T) {
		s.t = t
		s.must("PATCH", "/config/IntentSource", `{"Name":"default","TargetRevision":"main","Path":"leaf1.json","RepoSizeLimit":1}`)
		big := make([]byte, 3<<20) // random: git cannot compress it
		rand.Read(big)
		repo.Git("checkout", "-q", "-b", "large")
		repo.CommitSigned("leaf1.json", document(`{"VlanId":400}`))
		repo.Commit(map[string][]byte{"blob.bin": big})
		repo.Git("checkout", "-q", "main")
		s.must("PATCH", "/config/IntentSource", `{"Name":"default","TargetRevision":"large"}`)
		before := s.revision()
		code, m := s.do("POST", "/action/IntentFetch", `{}`)
		if code != http.StatusBadGateway || !strings.Contains(fmt.Sprint(m), "the repository is too large: more than 1048576 bytes fetched") {
			t.Fatalf("IntentFetch of a 3 MiB repository with RepoSizeLimit 1: %d %v", code, m)
		}
		if msg := fmt.Sprint(s.first("/state/IntentSources")["LastError"]); !strings.Contains(msg, "too large") {
			t.Fatalf("LastError %q", msg)
		}
		if s.revision() != before || !sameVlans(s.vlans(), 100) {
			t.Fatalf("a refused intent changed the switch: revision %v -> %v, VLANs %v", before, s.revision(), s.vlans())
		}
		s.must("PATCH", "/config/IntentSource", `{"Name":"default","TargetRevision":"main","RepoSizeLimit":256}`)
	})

	marker := filepath.Join(t.TempDir(), "pwned")
	for _, tc := range []struct{ name, body, field string }{
		{"a remote helper", fmt.Sprintf(`{"Name":"default","RepoURL":"ext::sh -c touch%% %s"}`, marker), "RepoURL"},
		{"an option as the URL", `{"Name":"default","RepoURL":"--upload-pack=touch /tmp/pwned"}`, "RepoURL"},
		{"an option as the host", `{"Name":"default","RepoURL":"ssh://-oProxyCommand=touch%20/tmp/pwned/x"}`, "RepoURL"},
		{"credentials in the URL", `{"Name":"default","RepoURL":"https://user:pw@192.0.2.1/r.git"}`, "RepoURL"},
		{"plain HTTP", `{"Name":"default","RepoURL":"http://192.0.2.1/r.git"}`, "RepoURL"},
		{"a relative file URL", `{"Name":"default","RepoURL":"file://../r.git"}`, "RepoURL"},
		{"an option as the ref", `{"Name":"default","TargetRevision":"--upload-pack=touch /tmp/pwned"}`, "TargetRevision"},
		{"a refspec as the ref", `{"Name":"default","TargetRevision":"+refs/heads/*:refs/heads/*"}`, "TargetRevision"},
		{"a ref with ..", `{"Name":"default","TargetRevision":"main..evil"}`, "TargetRevision"},
		{"a path out of the repository", `{"Name":"default","Path":"../../etc/shadow"}`, "Path"},
		{"an absolute path", `{"Name":"default","Path":"/etc/shadow"}`, "Path"},
		{"both URL and RepoURL", `{"Name":"default","URL":"https://192.0.2.1/x.json"}`, "URL"},
		{"a CA that is not one", `{"Name":"default","CACertificates":["bm90IGEgY2VydGlmaWNhdGU="]}`, "CACertificates"},
		{"a size bound over 4 GiB", `{"Name":"default","RepoSizeLimit":4097}`, "RepoSizeLimit"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s.t = t
			before := s.revision()
			code, m := s.do("PATCH", "/config/IntentSource", tc.body)
			if code != http.StatusBadRequest || !strings.Contains(fmt.Sprint(m), tc.field) {
				t.Fatalf("PATCH %s: %d %v, want 400 naming %s", tc.body, code, m, tc.field)
			}
			if s.revision() != before {
				t.Fatalf("a refused IntentSource was committed")
			}
		})
	}
	if _, err := os.Stat(marker); err == nil {
		t.Fatal("a hostile URL ran a command")
	}
}
