package test

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/crypto/ssh/knownhosts"

	"github.com/swmgr/swmgr/internal/archive/sshdtest"
)

// TestZTPSFTP: option 67 an sftp:// URL on OpenSSH's sshd (internal-sftp)
// in the provisioning server's namespace; the password is the switch's
// (a file), the host key checked against the switch's known hosts. The
// signed document is fetched, verified and applied; without the host key
// known the attempt fails saying so. The password is never logged nor
// shown.
func TestZTPSFTP(t *testing.T) {
	for _, tc := range []struct {
		name  string
		known bool
		want  string
	}{
		{"known host key", true, ""},
		{"unknown host key", false, "is unknown"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := newZTPLab(t)
			srv := sshdtest.StartInNetns(t, l.srvNS, l.srvAddr)
			doc := ztpDocument(42)
			os.WriteFile(filepath.Join(srv.Home, "switch.json"), doc, 0o644)
			os.WriteFile(filepath.Join(srv.Home, "switch.json.sig"), []byte(base64.StdEncoding.EncodeToString(ed25519.Sign(l.key, doc))), 0o644)
			dir := t.TempDir()
			password := filepath.Join(dir, "sftp-password")
			os.WriteFile(password, []byte(srv.Password+"\n"), 0o600)
			flags := []string{"--ztp-key", l.keyFile, "--ztp-sftp-password-file", password}
			if tc.known {
				known := filepath.Join(dir, "known_hosts")
				os.WriteFile(known, []byte(knownhosts.Line([]string{knownhosts.Normalize(srv.Addr())}, srv.HostKey())+"\n"), 0o600)
				flags = append(flags, "--ztp-sftp-known-hosts", known)
			}
			url := fmt.Sprintf("sftp://%s@%s%s/switch.json", srv.User, srv.Addr(), srv.Home)
			l.dhcp(t, "67,"+url)
			sw := l.start(t, "", flags...)
			var st map[string]any
			if tc.want == "" {
				st = sw.await(t, "done", 60*time.Second, phaseIs("done"))
				if st["ConfigURL"] != url || st["Verified"] != "signature" {
					t.Errorf("state %v", st)
				}
				t.Logf("DHCP offer to confirmation over SFTP: %v", stamp(t, st, "ConfirmedAt").Sub(stamp(t, st, "OfferAt")))
				if got := sw.vlans(t); len(got) != 1 || got[0] != 42 {
					t.Errorf("VLANs %v, want [42]", got)
				}
			} else {
				st = sw.await(t, "a failed attempt", 60*time.Second, func(st map[string]any) bool { return st["LastError"] != "" && st["Phase"] == "backoff" })
				if !strings.Contains(fmt.Sprint(st["LastError"]), tc.want) || len(sw.vlans(t)) != 0 {
					t.Errorf("state %v: want %q, nothing applied", st, tc.want)
				}
			}
			if strings.Contains(sw.logs.String(), srv.Password) || strings.Contains(jsonOf(st), srv.Password) {
				t.Errorf("the SFTP password is in the log or the state")
			}
		})
	}
}
