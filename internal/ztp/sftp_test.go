package ztp

import (
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh"
	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
)

// TestSFTPFetchFromOpenSSH fetches sftp:// URLs from OpenSSH's sshd
// (internal-sftp) with a password or a key configured on the switch, the
// host key checked against known hosts: an unknown key is refused unless
// allowed, a key other than the known one always; a password in the URL,
// a file over the bound and a directory are refused.
func TestSFTPFetchFromOpenSSH(t *testing.T) {
	srv := sshdtest.Start(t)
	_, priv, _ := ed25519.GenerateKey(rand.Reader)
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	srv.AuthorizeKey(signer.PublicKey())
	srv.Restart()
	doc := []byte(`{"SchemaVersion":1,"ConfigData":{}}`)
	if err := os.WriteFile(filepath.Join(srv.Home, "switch.json"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(srv.Home, "big.json"), make([]byte, 100_000), 0o644)
	dir := t.TempDir()
	knownFile := func(key ssh.PublicKey) string {
		p := filepath.Join(dir, ssh.FingerprintSHA256(key)[7:15]+".known_hosts")
		os.WriteFile(p, []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.Addr())}, key)+"\n"), 0o600)
		return p
	}
	known, err := LoadKnownHosts(knownFile(srv.HostKey()))
	if err != nil {
		t.Fatal(err)
	}
	_, otherPriv, _ := ed25519.GenerateKey(rand.Reader)
	otherSigner, _ := ssh.NewSignerFromKey(otherPriv)
	otherKnown, err := LoadKnownHosts(knownFile(otherSigner.PublicKey()))
	if err != nil {
		t.Fatal(err)
	}
	base := "sftp://" + srv.User + "@" + srv.Addr()
	var unknownTold string
	for _, tc := range []struct {
		name   string
		client *SFTPClient
		url    string
		max    int64
		err    string
	}{
		{"password", &SFTPClient{Password: srv.Password, KnownHosts: known}, base + srv.Home + "/switch.json", MaxDocument, ""},
		{"key", &SFTPClient{Signer: signer, KnownHosts: known}, base + srv.Home + "/switch.json", MaxDocument, ""},
		{"user configured", &SFTPClient{User: srv.User, Signer: signer, KnownHosts: known}, "sftp://" + srv.Addr() + srv.Home + "/switch.json", MaxDocument, ""},
		{"wrong password", &SFTPClient{Password: "not-it", KnownHosts: known}, base + srv.Home + "/switch.json", MaxDocument, "unable to authenticate"},
		{"unknown host key", &SFTPClient{Password: srv.Password}, base + srv.Home + "/switch.json", MaxDocument, "is unknown"},
		{"unknown host key allowed", &SFTPClient{Password: srv.Password, AllowUnknownHostKey: true,
			OnUnknownHostKey: func(host, fp string) { unknownTold = fp }}, base + srv.Home + "/switch.json", MaxDocument, ""},
		{"another host key", &SFTPClient{Password: srv.Password, KnownHosts: otherKnown, AllowUnknownHostKey: true}, base + srv.Home + "/switch.json", MaxDocument, "is not the one known for it"},
		{"password in the URL", &SFTPClient{Password: srv.Password, KnownHosts: known}, "sftp://" + srv.User + ":" + srv.Password + "@" + srv.Addr() + srv.Home + "/switch.json", MaxDocument, "a password in the URL is refused"},
		{"over the bound", &SFTPClient{Password: srv.Password, KnownHosts: known}, base + srv.Home + "/big.json", 64 << 10, "larger than 65536"},
		{"missing", &SFTPClient{Password: srv.Password, KnownHosts: known}, base + srv.Home + "/missing.json", MaxDocument, "not exist"},
		{"a directory", &SFTPClient{Password: srv.Password, KnownHosts: known}, base + srv.Home, MaxDocument, "not a regular file"},
		{"no credentials", nil, base + srv.Home + "/switch.json", MaxDocument, "no credentials configured"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFetcher(nil, 30*time.Second)
			f.SFTP = tc.client
			got, err := f.Get(context.Background(), tc.url, tc.max)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("Get: %v, want an error saying %q", err, tc.err)
				}
				if strings.Contains(err.Error(), srv.Password) {
					t.Fatalf("the error shows the password: %v", err)
				}
				return
			}
			if err != nil {
				t.Fatalf("Get: %v", err)
			}
			if string(got) != string(doc) {
				t.Fatalf("Get: %q, want %q", got, doc)
			}
		})
	}
	if unknownTold != ssh.FingerprintSHA256(srv.HostKey()) {
		t.Errorf("the unknown host key allowed was told as %q, want the server's %s", unknownTold, ssh.FingerprintSHA256(srv.HostKey()))
	}
}
