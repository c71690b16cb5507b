package main

import (
	"crypto/ed25519"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/crypto/ssh"

	"github.com/swmgr/swmgr/internal/ztp"
)

// ztpFlags configure zero-touch provisioning (docs/ztp.md). Off for a bare
// serve; the Debian package's /etc/default/swmgr turns it on.
type ztpFlags struct {
	enabled       bool
	iface         string
	inBand        bool
	keyFile       string
	allowUnsigned bool
	caFile        string
	allowScript   bool
	scriptTimeout time.Duration
	healthURL     string
	confirmWait   time.Duration
	backoff       time.Duration
	sftp          sftpFlags
}

// sftpFlags configure provisioning's SFTP fetches: the credentials and
// the known host keys are the switch's own, never DHCP's.
type sftpFlags struct {
	user, keyFile, passwordFile, knownHosts string
	allowUnknownHostKey                     bool
}

func addZTPFlags(f *pflag.FlagSet, z *ztpFlags) {
	f.BoolVar(&z.enabled, "ztp", false, "zero-touch provisioning: on a data directory with no configuration (or once re-armed by ZtpRearm), ask DHCP on --ztp-interface for a configuration URL (option 67) and apply the verified document as one confirmed commit (docs/ztp.md)")
	f.StringVar(&z.iface, "ztp-interface", "eth0", "the management interface zero-touch provisioning runs DHCP on")
	f.BoolVar(&z.inBand, "ztp-in-band", true, "linux backend: zero-touch provisioning runs DHCP on the front-panel ports too (the port map's netdevs that are up with link when an attempt starts); the first valid answer wins")
	f.StringVar(&z.keyFile, "ztp-key", "", "ed25519 public key (PEM, or 32 bytes in base64) that signs provisioned documents: each is fetched with its detached signature at its URL + \".sig\"")
	f.BoolVar(&z.allowUnsigned, "ztp-allow-unsigned", false, "apply provisioned documents that are neither signed nor matched by the SHA-256 of DHCP option 224 (trust the network)")
	f.StringVar(&z.caFile, "ztp-ca", "", "CA certificates (PEM) that provisioning's HTTPS servers are checked against (default: the system's)")
	f.BoolVar(&z.allowScript, "ztp-allow-script", false, "run the provisioning script DHCP option 239 names (verified as documents are), directly with a fixed environment and --ztp-script-timeout")
	f.DurationVar(&z.scriptTimeout, "ztp-script-timeout", 5*time.Minute, "how long a provisioning script may run before it is killed")
	f.StringVar(&z.healthURL, "ztp-health-url", "", "URL that must answer 2xx before --ztp-confirm-wait for a provisioned commit to be confirmed (else it is rolled back and provisioning tries again); \"\": confirmed once applied")
	f.DurationVar(&z.confirmWait, "ztp-confirm-wait", 2*time.Minute, "how long a provisioned commit awaits its confirmation")
	f.DurationVar(&z.backoff, "ztp-backoff", 5*time.Second, "wait after a failed provisioning attempt, doubled after each up to 5m")
	f.StringVar(&z.sftp.user, "ztp-sftp-user", "", "the user provisioning's sftp:// URLs log in as when they name none")
	f.StringVar(&z.sftp.keyFile, "ztp-sftp-key", "", "file holding the OpenSSH private key (unencrypted) provisioning's sftp:// fetches log in with")
	f.StringVar(&z.sftp.passwordFile, "ztp-sftp-password-file", "", "file holding the password provisioning's sftp:// fetches log in with")
	f.StringVar(&z.sftp.knownHosts, "ztp-sftp-known-hosts", "", "OpenSSH known_hosts file the SFTP servers' host keys are checked against ([host]:port for a port other than 22)")
	f.BoolVar(&z.sftp.allowUnknownHostKey, "ztp-sftp-allow-unknown-host-key", false, "accept an SFTP server whose host key is not in --ztp-sftp-known-hosts (its fingerprint is logged; a key other than the known one is always refused)")
}

// options are provisioning's service options; arm says the data directory
// is new.
func (z *ztpFlags) options(arm bool) (ztp.Options, error) {
	o := ztp.Options{Enabled: z.enabled, Arm: arm && z.enabled, Interface: z.iface, InBandPorts: z.inBand, AllowScript: z.allowScript, ScriptTimeout: z.scriptTimeout,
		HealthURL: z.healthURL, ConfirmWait: z.confirmWait, Backoff: z.backoff,
		Verifier: ztp.Verifier{AllowUnsigned: z.allowUnsigned}}
	if !z.enabled {
		return o, nil
	}
	if z.iface == "" {
		return o, errors.New("--ztp-interface: name the management interface")
	}
	if z.keyFile != "" {
		key, err := readEd25519(z.keyFile)
		if err != nil {
			return o, fmt.Errorf("--ztp-key: %w", err)
		}
		o.Verifier.Key = key
	}
	sftp, err := z.sftp.client()
	if err != nil {
		return o, err
	}
	o.SFTP = sftp
	if z.caFile != "" {
		data, err := os.ReadFile(z.caFile)
		if err != nil {
			return o, fmt.Errorf("--ztp-ca: %w", err)
		}
		o.RootCAs = x509.NewCertPool()
		if !o.RootCAs.AppendCertsFromPEM(data) {
			return o, fmt.Errorf("--ztp-ca: no PEM certificate in %s", z.caFile)
		}
	}
	return o, nil
}

// client is the SFTP client the flags configure; nil when they give no
// credentials (sftp:// URLs are then refused, saying why).
func (f sftpFlags) client() (*ztp.SFTPClient, error) {
	if f.keyFile == "" && f.passwordFile == "" {
		if f.knownHosts != "" || f.user != "" || f.allowUnknownHostKey {
			return nil, errors.New("--ztp-sftp-*: give the credentials, --ztp-sftp-key or --ztp-sftp-password-file")
		}
		return nil, nil
	}
	c := &ztp.SFTPClient{User: f.user, AllowUnknownHostKey: f.allowUnknownHostKey}
	if f.keyFile != "" {
		data, err := os.ReadFile(f.keyFile)
		if err != nil {
			return nil, fmt.Errorf("--ztp-sftp-key: %w", err)
		}
		if c.Signer, err = ssh.ParsePrivateKey(data); err != nil {
			return nil, fmt.Errorf("--ztp-sftp-key %s: %w", f.keyFile, err)
		}
	}
	if f.passwordFile != "" {
		data, err := os.ReadFile(f.passwordFile)
		if err != nil {
			return nil, fmt.Errorf("--ztp-sftp-password-file: %w", err)
		}
		if c.Password = strings.TrimRight(string(data), "\r\n"); c.Password == "" {
			return nil, fmt.Errorf("--ztp-sftp-password-file %s is empty", f.passwordFile)
		}
	}
	if f.knownHosts != "" {
		var err error
		if c.KnownHosts, err = ztp.LoadKnownHosts(f.knownHosts); err != nil {
			return nil, fmt.Errorf("--ztp-sftp-known-hosts: %w", err)
		}
	}
	return c, nil
}

// readEd25519 reads an ed25519 public key: PEM (PKIX) or its 32 bytes in
// base64.
func readEd25519(path string) (ed25519.PublicKey, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	if b, _ := pem.Decode(data); b != nil {
		k, err := x509.ParsePKIXPublicKey(b.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if ek, ok := k.(ed25519.PublicKey); ok {
			return ek, nil
		}
		return nil, fmt.Errorf("%s: not an ed25519 key", path)
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(string(data)))
	if err != nil || len(raw) != ed25519.PublicKeySize {
		return nil, fmt.Errorf("%s: neither PEM nor %d bytes in base64", path, ed25519.PublicKeySize)
	}
	return ed25519.PublicKey(raw), nil
}
