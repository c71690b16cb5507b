package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
	"github.com/spf13/pflag"
)

// manPage is what a command's man page says beyond its help: examples, the
// files it reads and writes, the environment it reads. Paths are written
// out in full.
type manPage struct {
	examples string
	files    [][2]string // path, what
	env      [][2]string // variable, what
}

// The files and variables of `swmgr serve`, which the package's unit runs.
var serveFiles = [][2]string{
	{"/var/lib/swmgr", "the data directory as root (--data-dir; not root: ~/.local/state/swmgr), mode 0700"},
	{"/var/lib/swmgr/swmgr.db", "the configuration database: objects, revisions, the config log, candidates"},
	{"/var/lib/swmgr/secret.key", "the key that seals write-only fields (passwords, keys) in the database"},
	{"/var/lib/swmgr/initial-admin-password", "the first admin's password, generated on the first start unless --admin-password-file or SWMGR_ADMIN_PASSWORD gives one (mode 0600)"},
	{"/var/lib/swmgr/tls-cert.pem, /var/lib/swmgr/tls-key.pem", "the self-signed HTTPS certificate and key made on the first start (unless --tls-cert and --tls-key); while a gNSI certz rotation is not finalized, the previous pair beside them as *.previous"},
	{"/var/lib/swmgr/startup-config", "the saved configuration (SaveConfig, `write memory`); loaded at the start of a new data directory"},
	{"/var/lib/swmgr/accounts/", "passwd, shadow, group and gshadow of swmgr's own accounts (--accounts own)"},
	{"/var/lib/swmgr/swmgr.pid", "the running server's process id; a second serve on the directory fails"},
	{"/run/swmgr/swmgr.sock", "the Unix socket for local clients as root (--socket; not root: <data-dir>/swmgr.sock)"},
	{"/run/swmgr/frr, /run/swmgr/chrony, /run/swmgr/lldpd, /run/swmgr/dhcrelay", "--backend linux: the configuration and sockets of swmgr's own FRR, chronyd and lldpd (--lldp lldpd), the logs of its dhcrelays (--dhcp-relay dhcrelay)"},
	{"/etc/default/swmgr", "SWMGR_OPTS, the options the systemd unit swmgr.service starts swmgr serve with"},
	{"/lib/systemd/system/swmgr.service", "the systemd unit (Type=notify: ready once the switch matches the stored configuration)"},
}

var manPages = map[string]manPage{
	"swmgr": {
		examples: "sudo systemctl status swmgr              # the packaged service\n" +
			"swmgr serve --https 127.0.0.1:8443       # not root: data in ~/.local/state/swmgr\n" +
			"swmgr cli -c 'show run'                  # the running configuration, as this OS user\n" +
			"source <(swmgr completion bash)",
		files: serveFiles,
		env: [][2]string{
			{"SWMGR_SOCKET", "the Unix socket swmgr cli connects to (see swmgr-cli(1))"},
			{"SWMGR_ADMIN_PASSWORD", "the first admin's password (see swmgr-serve(1))"},
		},
	},
	"swmgr serve": {
		examples: "swmgr serve                                    # as root: sim backend, HTTP 127.0.0.1:8080, HTTPS :443\n" +
			"swmgr serve --https 127.0.0.1:8443             # not root: :443 needs root\n" +
			"swmgr serve --backend linux --port-map /etc/swmgr/ports.conf\n" +
			"curl -s http://127.0.0.1:8080/public/v1/config/NtpServers\n" +
			"curl --unix-socket /run/swmgr/swmgr.sock http://swmgr/readyz",
		files: serveFiles,
		env: [][2]string{
			{"SWMGR_ADMIN_PASSWORD", "the first admin's password, on a new data directory, when --admin-password-file is not given (never on a command line)"},
			{"SWMGR_CONFIG_NONCE, SWMGR_CONFIG_PASSPHRASE", "decrypt an encrypted --startup-config"},
			{"NOTIFY_SOCKET", "set by systemd: swmgr sends READY=1 once the switch matches the stored configuration, STOPPING=1 at shutdown"},
			{"HOME", "not root: the default data directory is $HOME/.local/state/swmgr"},
		},
	},
	"swmgr cli": {
		examples: "swmgr cli                                             # interactive, as this OS user\n" +
			"swmgr cli -c 'enable; show run'\n" +
			"printf 'enable\\nconfig\\nntp server 192.0.2.10\\nexit\\napply\\n' | swmgr cli\n" +
			"swmgr cli --socket ~/.local/state/swmgr/swmgr.sock -c 'show vrf'\n" +
			"SWMGR_PASSWORD=... swmgr cli --url https://switch1 --user admin --cacert tls-cert.pem -f changes.txt",
		files: [][2]string{
			{"/run/swmgr/swmgr.sock", "the socket of the system's swmgr (root's swmgr serve)"},
			{"~/.local/state/swmgr/swmgr.sock", "the socket of the user's own swmgr serve (not root); tried first when not root"},
			{"~/.swmgr_cli_history", "the interactive history"},
		},
		env: [][2]string{
			{"SWMGR_SOCKET", "the Unix socket to connect to when --socket is not given"},
			{"SWMGR_PASSWORD", "the password for --user (read once, then removed from the environment); else prompted without echo"},
		},
	},
	"swmgr dump": {
		files: [][2]string{{"/var/lib/swmgr/swmgr.db", "the database it reads (--data-dir; the service stopped)"}},
	},
	"swmgr config decrypt": {
		env: [][2]string{{"SWMGR_CONFIG_NONCE, SWMGR_CONFIG_PASSPHRASE", "the nonce and passphrase the file was encrypted with"}},
	},
	"swmgr config encrypt": {
		env: [][2]string{{"SWMGR_CONFIG_NONCE, SWMGR_CONFIG_PASSPHRASE", "the nonce and passphrase to encrypt the file with"}},
	},
}

// manCommand writes the man pages the package installs; hidden, as only
// packaging needs it.
func manCommand() *cobra.Command {
	return &cobra.Command{
		Use:    "man <dir>",
		Short:  "Write the man pages (swmgr.1, swmgr-serve.1, ...) into dir",
		Args:   cobra.ExactArgs(1),
		Hidden: true,
		RunE: func(cmd *cobra.Command, args []string) error {
			root := cmd.Root()
			root.DisableAutoGenTag = true // the pages stay the same from build to build
			if err := os.MkdirAll(args[0], 0o755); err != nil {
				return err
			}
			return writeManPages(root, args[0])
		},
	}
}

// writeManPages writes one page per available command of root into dir.
func writeManPages(root *cobra.Command, dir string) error {
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if !c.IsAvailableCommand() && c != root || c.IsAdditionalHelpTopicCommand() {
			return
		}
		cmds = append(cmds, c)
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
	for _, c := range cmds {
		page := manPages[c.CommandPath()]
		// The markdown the pages go through takes <word> for an HTML
		// tag and drops it ("generated into <data-dir>/..." lost its
		// <data-dir>), and a flag's default is quoted (%q) before it, so
		// that a backslash there shows: every text the page shows, a
		// flag's default included ("else <data-dir>/swmgr.sock"), holds
		// its angle brackets as runes that markdown and %q pass through
		// as they are (⟪ ⟫, which no text of swmgr's uses), put back into
		// the roff written.
		c.Short, c.Long = manHide.Replace(c.Short), manHide.Replace(c.Long)
		c.Flags().VisitAll(func(f *pflag.Flag) {
			f.Usage, f.DefValue = manHide.Replace(f.Usage), manHide.Replace(f.DefValue)
		})
		if page.examples != "" {
			c.Example = page.examples
		}
	}
	for _, c := range cmds {
		header := &doc.GenManHeader{Title: "SWMGR", Section: "1", Source: "swmgr " + version(), Manual: "swmgr manual"}
		var b bytes.Buffer
		if err := doc.GenMan(c, header, &b); err != nil {
			return fmt.Errorf("man page of %s: %w", c.CommandPath(), err)
		}
		out := addManSections([]byte(manShow.Replace(b.String())), manPages[c.CommandPath()])
		name := strings.ReplaceAll(c.CommandPath(), " ", "-") + ".1"
		if err := os.WriteFile(filepath.Join(dir, name), out, 0o644); err != nil {
			return err
		}
	}
	return nil
}

// manHide and manShow hide a text's angle brackets from the markdown of a
// page and put them back in its roff.
var (
	manHide = strings.NewReplacer("<", "⟪", ">", "⟫")
	manShow = strings.NewReplacer("⟪", "<", "⟫", ">")
)

// addManSections puts FILES and ENVIRONMENT before SEE ALSO (or at the
// end), in roff.
func addManSections(page []byte, p manPage) []byte {
	var extra bytes.Buffer
	section := func(title string, rows [][2]string) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&extra, ".SH %s\n", title)
		for _, r := range rows {
			fmt.Fprintf(&extra, ".TP\n\\fB%s\\fP\n%s\n", roffEscape(r[0]), roffEscape(r[1]))
		}
	}
	section("FILES", p.files)
	section("ENVIRONMENT", p.env)
	if extra.Len() == 0 {
		return page
	}
	if i := bytes.Index(page, []byte(".SH SEE ALSO")); i >= 0 {
		return append(append(append([]byte{}, page[:i]...), extra.Bytes()...), page[i:]...)
	}
	return append(page, extra.Bytes()...)
}

func roffEscape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	s = strings.ReplaceAll(s, "-", `\-`)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
