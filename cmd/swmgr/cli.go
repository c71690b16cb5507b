package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/signal"
	"os/user"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/swmgr/swmgr/client"
	"github.com/swmgr/swmgr/internal/api"
	"github.com/swmgr/swmgr/internal/cli"
)

type cliOptions struct {
	url, socket, user, cacert, fingerprint string
	gnmi                                   string // the switch's gNMI port, for ping and traceroute
	command, file                          string
	noBanner, noColor                      bool
}

func cliCommand() *cobra.Command {
	var o cliOptions
	cmd := &cobra.Command{
		Use:   "cli",
		Short: "FlexSwitch's command-line interface (interactive, or scripted with -c, -f or piped input)",
		Long: `Without --url the CLI talks to the local swmgr as the OS user who runs it: over the
Unix socket --socket, else $SWMGR_SOCKET, else where swmgr serve listens by default:
not root, first the user's own server's (~/.local/state/swmgr/swmgr.sock), then
` + rootSocket + `; as root ` + rootSocket + `. A socket nothing listens on any more
is skipped with a note. Without any, http://127.0.0.1:8080. With --url https://host it needs --user; the password is read
from $SWMGR_PASSWORD or prompted, never from the command line. The server's
certificate is checked against --cacert, or pinned with --fingerprint.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runCLI(cmd, o) },
	}
	f := cmd.Flags()
	f.StringVar(&o.url, "url", "", "remote swmgr, https://host[:port] (or http://127.0.0.1:port)")
	f.StringVar(&o.socket, "socket", "", "the local swmgr's Unix socket")
	f.StringVarP(&o.user, "user", "u", "", "User to log in as (password from $SWMGR_PASSWORD or prompted)")
	f.StringVar(&o.cacert, "cacert", "", "PEM file of the CA or certificate to trust for --url https://")
	f.StringVar(&o.fingerprint, "fingerprint", "", "SHA-256 of the server certificate to pin (hex)")
	f.StringVar(&o.gnmi, "gnmi", "", "the switch's gNMI address (host:port) with --url and --user: ping and traceroute run there over gNOI")
	f.StringVarP(&o.command, "command", "c", "", `commands to run, separated by ";" (then exit)`)
	f.StringVarP(&o.file, "file", "f", "", "file of commands to run (then exit)")
	f.BoolVar(&o.noBanner, "no-banner", false, "no banner at start")
	f.BoolVar(&o.noColor, "no-color", false, "no colour even on a terminal")
	return cmd
}

func runCLI(cmd *cobra.Command, o cliOptions) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	pw := ""
	if o.user != "" {
		if err := credentialsSafeTo(o.url); err != nil {
			return err
		}
		var err error
		if pw, err = cliPassword(o.user); err != nil {
			return err
		}
	}
	api, endpoint, err := cliClient(o, pw, cmd.ErrOrStderr())
	if err != nil {
		return err
	}
	var probe cli.Prober
	if o.gnmi != "" {
		if o.url == "" || o.user == "" {
			return errors.New("--gnmi goes with --url https://... and --user: gNOI needs the user's password")
		}
		p, conn, err := newGNOIProber(o.gnmi, api.TLSConfig(), o.user, pw)
		if err != nil {
			return err
		}
		defer conn.Close()
		probe = p.Probe
	}
	interactive := term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	ro := cli.RunOptions{In: os.Stdin, Out: cmd.OutOrStdout(), Endpoint: endpoint.name, Banner: !o.noBanner, Probe: probe}
	switch {
	case o.command != "":
		ro.Commands = cli.SplitCommands(o.command)
	case o.file != "":
		fh, err := os.Open(o.file)
		if err != nil {
			return fmt.Errorf("-f: %w", err)
		}
		defer fh.Close()
		ro.In = fh
	case interactive:
		ro.Interactive, ro.Color = true, !o.noColor
		ro.HistoryFile = cli.DefaultHistoryFile()
		if o.url == "" {
			// `shell` is bash on this machine: offered only when the CLI
			// runs on the switch itself (see internal/cli/osshell.go).
			ro.Shell, ro.Root = runBash, os.Geteuid() == 0
			if u, err := user.Current(); err == nil {
				ro.OSUser = u.Username
			}
		}
	}
	err = cli.Run(ctx, api, ro)
	if errors.Is(err, cli.ErrSomeFailed) {
		os.Exit(1)
	}
	return connectHint(err, o, endpoint)
}

// runBash runs an interactive bash as this process's user, on its
// terminal, until it exits. The CLI catches and drops Ctrl-C and Ctrl-\
// meanwhile: they are meant for bash and its commands, which share the
// terminal. (Caught, not ignored: an ignored signal would stay ignored in
// bash's commands, and Ctrl-C could not stop them.)
func runBash(ctx context.Context) error {
	drop := make(chan os.Signal, 1)
	signal.Notify(drop, os.Interrupt, syscall.SIGQUIT)
	defer signal.Stop(drop)
	sh := exec.CommandContext(ctx, "/bin/bash", "-i")
	sh.Stdin, sh.Stdout, sh.Stderr = os.Stdin, os.Stdout, os.Stderr
	sh.Env = append(os.Environ(), "SWMGR_CLI_SHELL=1")
	err := sh.Run()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return nil // bash's own status: the user typed exit N
	}
	return err
}

// cliEndpoint is the server the CLI talks to: its name in messages and
// prompts, and the address it tried, for connection errors.
type cliEndpoint struct {
	name    string // localhost, 127.0.0.1, or the --url's host
	address string // "the Unix socket /run/swmgr/swmgr.sock", "http://127.0.0.1:8080", ...
}

// connectHint adds to a connection error the address tried and what
// chooses another one.
func connectHint(err error, o cliOptions, ep cliEndpoint) error {
	var op *net.OpError
	if err == nil || !errors.As(err, &op) {
		return err
	}
	if o.url != "" {
		return fmt.Errorf("%w\n(tried %s, from --url)", err, ep.address)
	}
	return fmt.Errorf("%w\n(tried %s; to reach another swmgr give --socket PATH or set SWMGR_SOCKET, or --url for a remote one)", err, ep.address)
}

// localSockets are where a local swmgr serve listens by default, in the
// order the CLI tries them: not root, the user's own server's (the rule
// serve uses: <its default data directory>/swmgr.sock) before the
// system's; as root, the system's.
func localSockets() []string {
	if os.Geteuid() == 0 {
		return []string{rootSocket}
	}
	return []string{filepath.Join(defaultDataDir(), socketFile), rootSocket}
}

// liveSocket is the first of paths that is a socket something listens on.
// A socket file whose server is gone (connection refused) is skipped with
// a note on notes.
func liveSocket(paths []string, notes io.Writer) string {
	for _, p := range paths {
		fi, err := os.Stat(p)
		if err != nil || fi.Mode()&os.ModeSocket == 0 {
			continue
		}
		c, err := net.DialTimeout("unix", p, 5*time.Second)
		if errors.Is(err, syscall.ECONNREFUSED) {
			fmt.Fprintf(notes, "swmgr cli: skipping %s: no swmgr listens on it (left by a server that is gone)\n", p)
			continue
		}
		if c != nil {
			c.Close()
		}
		return p // connected, or an error the first request will report
	}
	return ""
}

// cliClient connects as the options say (as --user with pw, when
// given); it returns what to call the server in messages and where it is.
func cliClient(o cliOptions, pw string, notes io.Writer) (*client.Client, cliEndpoint, error) {
	var opts []client.Option
	opts = append(opts, client.WithUserAgent(api.CLIUserAgent))
	if o.user != "" {
		if err := credentialsSafeTo(o.url); err != nil {
			return nil, cliEndpoint{}, err
		}
		opts = append(opts, client.WithBasicAuth(o.user, pw))
	}
	if o.url != "" {
		raw := o.url
		if !strings.Contains(raw, "://") {
			raw = "https://" + raw
		}
		if o.cacert != "" {
			opts = append(opts, client.WithCAFile(o.cacert))
		}
		if o.fingerprint != "" {
			opts = append(opts, client.WithFingerprint(o.fingerprint))
		}
		c, err := client.New(raw, opts...)
		if err != nil {
			return nil, cliEndpoint{}, err
		}
		host := strings.TrimPrefix(strings.TrimPrefix(raw, "https://"), "http://")
		return c, cliEndpoint{name: strings.TrimSuffix(host, "/"), address: raw}, nil
	}
	sock, from := o.socket, "--socket"
	if sock == "" {
		sock, from = os.Getenv("SWMGR_SOCKET"), "SWMGR_SOCKET"
	}
	if sock == "" {
		sock, from = liveSocket(localSockets(), notes), "the default"
	}
	if sock != "" {
		c, err := client.New("http://localhost", append(opts, client.WithUnixSocket(sock))...)
		return c, cliEndpoint{name: "localhost", address: fmt.Sprintf("the Unix socket %s (%s)", sock, from)}, err
	}
	c, err := client.New("http://127.0.0.1:8080", opts...)
	return c, cliEndpoint{name: "127.0.0.1", address: "http://127.0.0.1:8080 (no swmgr socket found at " + strings.Join(localSockets(), " or ") + ")"}, err
}

// cliPassword is $SWMGR_PASSWORD (removed from the environment once read)
// or typed at the terminal without echo.
// credentialsSafeTo refuses to send --user's password over plain HTTP to
// another machine: Basic credentials would cross the network in clear.
// https://, a bare host (https is assumed) and http:// to a loopback
// address or localhost are fine.
func credentialsSafeTo(rawURL string) error {
	if !strings.HasPrefix(strings.ToLower(rawURL), "http://") {
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil // client.New says what is wrong with it
	}
	h := u.Hostname()
	if ip := net.ParseIP(h); h == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--url %s with --user: the password would cross the network in clear over http://; use https://%s", rawURL, u.Host)
}

func cliPassword(user string) (string, error) {
	if pw, ok := os.LookupEnv("SWMGR_PASSWORD"); ok {
		os.Unsetenv("SWMGR_PASSWORD")
		return pw, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("--user %s: no terminal to ask the password on; set SWMGR_PASSWORD", user)
	}
	defer tty.Close()
	fmt.Fprintf(tty, "Password for %s: ", user)
	b, err := term.ReadPassword(int(tty.Fd()))
	fmt.Fprintln(tty)
	if err != nil {
		return "", fmt.Errorf("read password: %w", err)
	}
	return string(b), nil
}

// loginShellArgs turns a login shell's invocation (argv[0] "-swmgr", as
// login, sshd and su - start a user's shell) into `swmgr cli`.
func loginShellArgs(args []string) []string {
	if len(args) == 0 || !strings.HasPrefix(filepath.Base(args[0]), "-") {
		return nil
	}
	return append([]string{"cli"}, args[1:]...)
}
