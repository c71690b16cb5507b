package main

import (
	"crypto/rand"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/swmgr/swmgr/internal/accounts"
	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/datadir"
	"github.com/swmgr/swmgr/internal/gnoi"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// Access: the switch's accounts, the first admin's password and the HTTPS
// certificate (package access makes the first admin).

const (
	// adminPasswordEnv names the first admin's password.
	adminPasswordEnv = "SWMGR_ADMIN_PASSWORD"
	// initialPasswordFile is where a generated first admin password is
	// written, in the data directory.
	initialPasswordFile = datadir.InitialPassword
	// accountsDir holds the simulated switch's passwd, shadow, group and
	// gshadow, in the data directory.
	accountsDir = datadir.Accounts
)

// openAccounts returns the accounts of the switch backend: the simulated
// switch keeps account files of its own in the data directory. owned says
// the accounts belong to swmgr alone.
func openAccounts(o *serveOptions) (acc accounts.Accounts, owned bool, err error) {
	if o.accounts != nil {
		return o.accounts, false, nil
	}
	files, err := accounts.OpenFiles(filepath.Join(o.dataDir, accountsDir), accounts.SwitchFilesOptions())
	if err != nil {
		return nil, false, fmt.Errorf("the simulated switch's accounts: %w", err)
	}
	return files, true, nil
}

// cliShell is the login shell of users whose DefaultShell is CLI: this
// program, which runs as `swmgr cli`.
func cliShell() string {
	if p, err := os.Executable(); err == nil {
		if p, err := filepath.EvalSymlinks(p); err == nil && filepath.IsAbs(p) {
			return p
		}
	}
	return "/usr/local/bin/swmgr"
}

// initialAdminPassword returns the first admin's password and where it came
// from.
func initialAdminPassword(dataDir, file, env string) (password, from string, err error) {
	if file != "" {
		b, err := os.ReadFile(file)
		if err != nil {
			return "", "", fmt.Errorf("--admin-password-file: %w", err)
		}
		p := strings.TrimRight(string(b), "\r\n")
		if p == "" {
			return "", "", fmt.Errorf("--admin-password-file %s is empty", file)
		}
		return p, "--admin-password-file " + file, nil
	}
	if env != "" {
		return env, adminPasswordEnv, nil
	}
	path := filepath.Join(dataDir, initialPasswordFile)
	if b, err := os.ReadFile(path); err == nil { // written by a start that did not finish
		if p := strings.TrimRight(string(b), "\r\n"); p != "" {
			return p, path, nil
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", "", err
	}
	p := rand.Text()
	if err := atomicfile.WriteNew(path, []byte(p+"\n"), 0o600); err != nil {
		return "", "", fmt.Errorf("the first admin's password: %w", err)
	}
	return p, path, nil
}

// serverCertificate puts back the previous certificate of a certz
// rotation a stop interrupted, loads --tls-cert/--tls-key, or the self-signed
// certificate in the data directory (made on first start for the host name
// and the listen address), and follows the files: a certificate replaced
// there (renewed by the fleet's CA) is served from the next handshake on,
// and client certificates are checked against the trust bundle and
// revocation lists the data directory holds then (gNSI certz's).
func serverCertificate(o *serveOptions, listen string, log *slog.Logger) (*tlscert.Source, error) {
	files := serverCertFiles(o)
	certFile, keyFile := files.Cert, files.Key
	switch was, err := gnoi.PutBackUnfinishedRotation(files); {
	case err != nil:
		return nil, err
	case was:
		log.Warn("a certificate rotation (gNSI certz) was not finalized before swmgr stopped; the previous certificate is back", "file", certFile)
	}
	if o.tlsCert == "" {
		cert, created, err := tlscert.LoadOrCreate(o.dataDir, tlscert.Hosts(listen))
		if err != nil {
			return nil, err
		}
		if created {
			log.Info("made a self-signed certificate", "file", certFile, "names", append(cert.Leaf.DNSNames, ipStrings(cert)...))
		}
	}
	src, err := tlscert.Watch(certFile, keyFile, func(cert tls.Certificate, err error) {
		if err != nil {
			log.Warn("certificate files changed but cannot be used; still serving the previous certificate", "listen", listen, "err", err)
			return
		}
		log.Info("certificate reloaded", "listen", listen, "file", certFile, "cert_sha256", tlscert.Fingerprint(cert), "not_after", cert.Leaf.NotAfter)
	})
	if err != nil {
		return nil, err
	}
	err = src.TrustClients(files.CA, files.CRL, o.requireClientCert, func(t tlscert.ClientTrust, err error) {
		if err != nil {
			log.Warn("client trust files changed but cannot be used; still checking with the previous ones", "listen", listen, "err", err)
			return
		}
		log.Info("client trust reloaded", "listen", listen, "trust_bundle_cas", len(t.CAs), "revocation_lists", len(t.CRLs))
	})
	if err != nil {
		return nil, err
	}
	return src, nil
}

// serverCertFiles are the files of the listeners' profile: the
// certificate and key served (--tls-cert and --tls-key, or the
// self-signed pair in the data directory) and the trust bundle and
// revocation lists client certificates are checked against (in the data
// directory).
func serverCertFiles(o *serveOptions) gnoi.CertFiles {
	f := gnoi.CertFiles{Cert: filepath.Join(o.dataDir, tlscert.CertFile), Key: filepath.Join(o.dataDir, tlscert.KeyFile),
		CA: filepath.Join(o.dataDir, datadir.TLSClientCA), CRL: filepath.Join(o.dataDir, datadir.TLSClientCRL)}
	if o.tlsCert != "" {
		f.Cert, f.Key = o.tlsCert, o.tlsKey
	}
	return f
}

func ipStrings(cert tls.Certificate) []string {
	var out []string
	for _, ip := range cert.Leaf.IPAddresses {
		out = append(out, ip.String())
	}
	return out
}
