package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"golang.org/x/sys/unix"

	"github.com/swmgr/swmgr/internal/archive"
	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/configfile"
	"github.com/swmgr/swmgr/internal/model"
)

// Environment variables that give config decrypt and encrypt their Nonce and Passphrase
// (never argv: a command line is visible to every local user).
const (
	nonceEnv      = "SWMGR_CONFIG_NONCE"
	passphraseEnv = "SWMGR_CONFIG_PASSPHRASE"
)

func configCommand() *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Work on saved configuration files offline"}
	var in, out string
	decrypt := &cobra.Command{
		Use:   "decrypt --in FILE",
		Short: "Print the plaintext of a configuration saved with Nonce and Passphrase",
		Long: "Decrypts a file that SaveConfig or a ConfigArchiveServer wrote with Nonce and Passphrase and prints the JSON document.\n" +
			"The Nonce and Passphrase come from $" + nonceEnv + " and $" + passphraseEnv + ", or are asked on the terminal (the passphrase without echo).\n" +
			"The plaintext holds the configuration's secrets: write it with --out (mode 0600) rather than to a shared terminal.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" {
				return errors.New("give the file with --in")
			}
			data, err := archive.ReadLocal(in)
			if err != nil {
				return err
			}
			if !configfile.IsEncrypted(data) {
				return fmt.Errorf("%s is not encrypted (it is readable as it is)", in)
			}
			nonce, err := secretInput(nonceEnv, "Nonce: ", true)
			if err != nil {
				return err
			}
			pass, err := secretInput(passphraseEnv, "Passphrase: ", false)
			if err != nil {
				return err
			}
			plain, err := configfile.Open(data, nonce, pass)
			if err != nil {
				return fmt.Errorf("%s: %w", in, err)
			}
			if out != "" {
				return atomicfile.WriteNew(out, plain, 0o600)
			}
			_, err = cmd.OutOrStdout().Write(plain)
			return err
		},
	}
	decrypt.Flags().StringVar(&in, "in", "", "the encrypted file")
	decrypt.Flags().StringVar(&out, "out", "", "write the plaintext to this new file (mode 0600) instead of stdout")
	cmd.AddCommand(decrypt, encryptCommand())
	return cmd
}

// encryptCommand seals a plaintext document (what config decrypt printed,
// edited or not) into an encrypted file that a restore takes with the same
// Nonce and Passphrase: the way back for a decrypted file, whose secrets in
// clear a restore refuses in a plain file.
func encryptCommand() *cobra.Command {
	var in, out string
	cmd := &cobra.Command{
		Use:   "encrypt --in FILE --out NEW",
		Short: "Encrypt a plaintext configuration with Nonce and Passphrase, so that a restore takes it",
		Long: "Checks a plaintext document (the output of config decrypt, or any configuration file) as a restore would read it, then encrypts it as SaveConfig does with Nonce and Passphrase and writes it to a new file (mode 0600).\n" +
			"The Nonce and Passphrase come from $" + nonceEnv + " and $" + passphraseEnv + ", or are asked on the terminal (the passphrase twice, without echo).",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if in == "" || out == "" {
				return errors.New("give the plaintext with --in and the new file with --out")
			}
			plain, err := archive.ReadLocal(in)
			if err != nil {
				return err
			}
			if configfile.IsEncrypted(plain) {
				return fmt.Errorf("%s is already encrypted", in)
			}
			doc, err := configfile.Decode(bytes.NewReader(plain), model.Builtin(), configfile.DecodeOptions{Encrypted: true})
			if err != nil {
				return fmt.Errorf("%s is not a configuration a restore would take: %w", in, err)
			}
			nonce, err := secretInput(nonceEnv, "Nonce: ", true)
			if err != nil {
				return err
			}
			_, fromEnv := os.LookupEnv(passphraseEnv)
			pass, err := secretInput(passphraseEnv, "Passphrase: ", false)
			if err != nil {
				return err
			}
			if !fromEnv {
				again, err := secretInput(passphraseEnv, "Passphrase again: ", false)
				if err != nil {
					return err
				}
				if again != pass {
					return errors.New("the passphrases differ")
				}
			}
			if nonce == "" || pass == "" {
				return errors.New("the Nonce and the Passphrase must not be empty")
			}
			sealed, err := configfile.Seal(plain, nonce, pass, configfile.DefaultKDF)
			if err != nil {
				return err
			}
			if err := atomicfile.WriteNew(out, sealed, 0o600); err != nil {
				return err
			}
			fmt.Fprintf(cmd.ErrOrStderr(), "%s: %d objects encrypted\n", out, doc.Count())
			return nil
		},
	}
	cmd.Flags().StringVar(&in, "in", "", "the plaintext configuration")
	cmd.Flags().StringVar(&out, "out", "", "the new encrypted file (mode 0600)")
	return cmd
}

// secretInput reads a value from the environment (then unsets it, so that
// nothing started later inherits it) or, failing that, from the terminal.
func secretInput(env, prompt string, echo bool) (string, error) {
	if v, ok := os.LookupEnv(env); ok {
		os.Unsetenv(env)
		return v, nil
	}
	tty, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return "", fmt.Errorf("set $%s or run on a terminal to be asked", env)
	}
	defer tty.Close()
	fmt.Fprint(tty, prompt)
	if !echo {
		fd := int(tty.Fd())
		old, err := unix.IoctlGetTermios(fd, unix.TCGETS)
		if err != nil {
			return "", fmt.Errorf("set $%s: the terminal cannot hide input: %w", env, err)
		}
		quiet := *old
		quiet.Lflag &^= unix.ECHO
		if err := unix.IoctlSetTermios(fd, unix.TCSETS, &quiet); err != nil {
			return "", err
		}
		defer func() {
			unix.IoctlSetTermios(fd, unix.TCSETS, old)
			fmt.Fprintln(tty)
		}()
	}
	line, err := bufio.NewReader(tty).ReadString('\n')
	if err != nil && !(errors.Is(err, io.EOF) && line != "") {
		return "", fmt.Errorf("read %s: %w", strings.TrimSuffix(prompt, ": "), err)
	}
	return strings.TrimRight(line, "\r\n"), nil
}
