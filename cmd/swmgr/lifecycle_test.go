package main

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/swmgr/swmgr/internal/configfile"
)

// TestEncryptedSaveDecryptRestore saves with Nonce and Passphrase through
// the running service, decrypts the file with `swmgr config decrypt`
// (secrets from the environment, never argv), and restores the encrypted
// file and the plaintext's ConfigData (the plaintext itself is refused).
func TestEncryptedSaveDecryptRestore(t *testing.T) {
	s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), noFirstAdmin: true, https: "-"})
	s.want(s.req(false, "POST", "/config/NtpServer", "", "", `{"IpAddr":"192.0.2.44","MinPoll":5}`), 201, "create")
	s.want(s.req(false, "POST", "/config/ConfigArchiveServer", "", "", `{"IpAddr":"192.0.2.45","Username":"u","Password":"archive-secret"}`), 201, "create")
	enc := filepath.Join(t.TempDir(), "saved.enc")
	r := s.req(false, "POST", "/action/SaveConfig", "", "", `{"DstFileURI":"file://`+enc+`","Nonce":"n-1","Passphrase":"pass phrase 1"}`)
	s.want(r, 200, "save")
	data, _ := os.ReadFile(enc)
	if !configfile.IsEncrypted(data) {
		t.Fatal("not encrypted")
	}

	decrypt := func(nonce, pass string, args ...string) (string, error) {
		t.Setenv(nonceEnv, nonce)
		t.Setenv(passphraseEnv, pass)
		cmd := configCommand()
		var out bytes.Buffer
		cmd.SetOut(&out)
		cmd.SetArgs(append([]string{"decrypt"}, args...))
		err := cmd.Execute()
		if _, still := os.LookupEnv(passphraseEnv); still {
			t.Error("the passphrase stayed in the environment")
		}
		return out.String(), err
	}
	if _, err := decrypt("n-1", "wrong", "--in", enc); err == nil || !strings.Contains(err.Error(), "wrong Nonce or Passphrase") {
		t.Fatalf("wrong passphrase: %v", err)
	}
	plain, err := decrypt("n-1", "pass phrase 1", "--in", enc)
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Format     int
		ConfigData map[string][]map[string]any
	}
	if err := json.Unmarshal([]byte(plain), &doc); err != nil || doc.Format < 2 || doc.Format > configfile.FormatVersion || len(doc.ConfigData["NtpServer"]) != 1 {
		t.Fatalf("decrypted: %v %.200s", err, plain)
	}
	out := filepath.Join(t.TempDir(), "plain.json")
	if _, err := decrypt("n-1", "pass phrase 1", "--in", enc, "--out", out); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(out); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("--out: %v %v", err, fi)
	}

	// The decrypted plaintext says "Secrets":"clear": a restore refuses it
	// as a plain file (secrets in clear belong inside an encrypted file).
	s.want(s.req(false, "DELETE", "/config/NtpServer", "", "", `{"IpAddr":"192.0.2.44"}`), 200, "delete")
	s.want(s.req(false, "POST", "/action/ResetConfigToFile", "", "", `{"SrcFileURI":"file://`+out+`"}`), 400, "restore the decrypted file")
	// Its ConfigData alone is a FlexSwitch (format 1) file, which may hold
	// secrets in clear: the configuration comes back.
	var whole map[string]json.RawMessage
	if err := json.Unmarshal([]byte(plain), &whole); err != nil {
		t.Fatal(err)
	}
	flex := filepath.Join(t.TempDir(), "flex.json")
	os.WriteFile(flex, []byte(`{"ConfigData":`+string(whole["ConfigData"])+`}`), 0o600)
	s.want(s.req(false, "POST", "/action/ResetConfigToFile", "", "", `{"SrcFileURI":"file://`+flex+`"}`), 200, "restore its ConfigData as a format 1 file")
	s.want(s.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.44", "", "", ""), 200, "restored object")
	// The plaintext encrypted again with `swmgr config encrypt` (an edited
	// copy, say): a restore takes it with the new Nonce and Passphrase.
	encrypt := func(nonce, pass string, args ...string) error {
		t.Setenv(nonceEnv, nonce)
		t.Setenv(passphraseEnv, pass)
		cmd := configCommand()
		cmd.SetOut(io.Discard)
		cmd.SetErr(io.Discard)
		cmd.SetArgs(append([]string{"encrypt"}, args...))
		return cmd.Execute()
	}
	edited := filepath.Join(t.TempDir(), "edited.json")
	os.WriteFile(edited, bytes.Replace([]byte(plain), []byte(`"192.0.2.44"`), []byte(`"192.0.2.46"`), 1), 0o600)
	reenc := filepath.Join(t.TempDir(), "edited.enc")
	if err := encrypt("n-2", "pass phrase 2", "--in", enc, "--out", reenc); err == nil || !strings.Contains(err.Error(), "already encrypted") {
		t.Fatalf("encrypt an encrypted file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, bytes.Replace([]byte(plain), []byte(`"MinPoll":5`), []byte(`"MinPoll":"five"`), 1), 0o600)
	if err := encrypt("n-2", "pass phrase 2", "--in", bad, "--out", reenc); err == nil || !strings.Contains(err.Error(), "MinPoll") {
		t.Fatalf("encrypt an invalid document: %v", err)
	}
	if _, err := os.Stat(reenc); err == nil {
		t.Fatal("a refused encrypt wrote its file")
	}
	if err := encrypt("n-2", "pass phrase 2", "--in", edited, "--out", reenc); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(reenc); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("encrypt --out: %v %v", err, fi)
	}
	if data, _ := os.ReadFile(reenc); bytes.Contains(data, []byte("archive-secret")) || !configfile.IsEncrypted(data) {
		t.Fatal("the re-encrypted file holds a secret in clear")
	}
	s.want(s.req(false, "POST", "/action/ResetConfigToFile", "", "", `{"SrcFileURI":"file://`+reenc+`","Nonce":"n-1","Passphrase":"pass phrase 1"}`), 400, "restore with the old passphrase")
	s.want(s.req(false, "POST", "/action/ResetConfigToFile", "", "", `{"SrcFileURI":"file://`+reenc+`","Nonce":"n-2","Passphrase":"pass phrase 2"}`), 200, "restore the re-encrypted file")
	s.want(s.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.46", "", "", ""), 200, "the edited object")
	s.want(s.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.44", "", "", ""), 404, "the object edited away")

	// And the encrypted file itself.
	s.want(s.req(false, "POST", "/action/ResetConfigToFile", "", "", `{"SrcFileURI":"file://`+enc+`","Nonce":"n-1","Passphrase":"pass phrase 1"}`), 200, "restore the encrypted file")
	s.want(s.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.44", "", "", ""), 200, "restored object")
	if strings.Contains(s.logs.String(), "pass phrase 1") || strings.Contains(s.logs.String(), "archive-secret") {
		t.Fatal("a secret was logged")
	}
}

// TestStartupConfig loads the startup configuration on a new data
// directory only, and SystemParamState tells saved from running.
func TestStartupConfig(t *testing.T) {
	first := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), noFirstAdmin: true, https: "-"})
	first.want(first.req(false, "POST", "/config/NtpServer", "", "", `{"IpAddr":"192.0.2.50"}`), 201, "create")
	first.want(first.req(false, "PATCH", "/config/SystemParam", "", "", `{"Hostname":"from-startup"}`), 200, "patch")
	enc := filepath.Join(t.TempDir(), "startup.enc")
	first.want(first.req(false, "POST", "/action/SaveConfig", "", "", `{"DstFileURI":"file://`+enc+`","Nonce":"boot","Passphrase":"boot pass"}`), 200, "save")
	first.stop()

	unsaved := func(s *instance) (bool, float64, float64) {
		r := s.req(false, "GET", "/state/SystemParam", "", "", "")
		o := r.body["Object"].(map[string]any)
		return o["UnsavedChanges"].(bool), o["SavedRevision"].(float64), o["RunningRevision"].(float64)
	}

	t.Run("--startup-config, encrypted, secrets from the environment", func(t *testing.T) {
		t.Setenv(nonceEnv, "boot")
		t.Setenv(passphraseEnv, "boot pass")
		s := startSwmgr(t, &serveOptions{dataDir: t.TempDir(), noFirstAdmin: true, https: "-", startupConfig: "file://" + enc})
		s.want(s.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.50", "", "", ""), 200, "loaded object")
		if u, saved, running := unsaved(s); u || saved != running {
			t.Fatalf("after the startup load: unsaved %v, saved %v, running %v", u, saved, running)
		}
		s.want(s.req(false, "PATCH", "/config/SystemParam", "", "", `{"Hostname":"changed"}`), 200, "patch")
		if u, saved, running := unsaved(s); !u || saved == running {
			t.Fatalf("after a change: unsaved %v, saved %v, running %v", u, saved, running)
		}
	})

	t.Run("<data-dir>/startup-config on a new directory only", func(t *testing.T) {
		dir := t.TempDir()
		s := startSwmgr(t, &serveOptions{dataDir: dir, noFirstAdmin: true, https: "-"})
		s.want(s.req(false, "POST", "/config/NtpServer", "", "", `{"IpAddr":"192.0.2.60"}`), 201, "create")
		s.want(s.req(false, "POST", "/action/SaveConfig", "", "", `{}`), 200, "save")
		s.stop()
		// A copy of the data directory's saved file (and its key, which
		// opens the file's sealed secrets) on a new directory loads.
		fresh := t.TempDir()
		for _, name := range []string{"startup-config", "secret.key"} {
			b, _ := os.ReadFile(filepath.Join(dir, name))
			os.WriteFile(filepath.Join(fresh, name), b, 0o600)
		}
		s2 := startSwmgr(t, &serveOptions{dataDir: fresh, noFirstAdmin: true, https: "-"})
		s2.want(s2.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.60", "", "", ""), 200, "loaded from the data directory")
		s2.want(s2.req(false, "DELETE", "/config/NtpServer", "", "", `{"IpAddr":"192.0.2.60"}`), 200, "delete")
		s2.stop()
		// Not a new directory any more: a restart keeps the running
		// configuration, the startup file is not applied again.
		s3 := startSwmgr(t, &serveOptions{dataDir: fresh, noFirstAdmin: true, https: "-"})
		s3.want(s3.req(false, "GET", "/config/NtpServer?IpAddr=192.0.2.60", "", "", ""), 404, "not reloaded")
	})

	t.Run("a named startup file that cannot load stops serve", func(t *testing.T) {
		o := &serveOptions{dataDir: t.TempDir(), noFirstAdmin: true, http: "127.0.0.1:0", https: "", startupConfig: "file://" + enc}
		o.backend, o.ports, o.logFormat, o.logLevel, o.logOut = "sim", 4, "text", "info", &syncBuffer{}
		err := serve(t.Context(), o)
		if err == nil || !strings.Contains(err.Error(), "encrypted") {
			t.Fatalf("serve: %v", err)
		}
	})
}
