package main

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/tlscert"
)

// certCommand is `swmgr cert`: the switch's side of enrolment with a fleet
// CA. `cert request` makes a key and a signing request; the CA's
// certificate goes where --tls-cert names, and swmgr serves it from the
// next handshake on (docs/operations.md).
func certCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cert",
		Short: "Certificates for HTTPS and gNMI signed by a fleet CA",
		Args:  cobra.NoArgs,
	}
	var cn, keyFile, csrFile string
	var sans []string
	request := &cobra.Command{
		Use:   "request",
		Short: "Make a private key (mode 0600) and a certificate signing request (PEM) for the fleet CA to sign",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if keyFile == "" {
				return errors.New("--key: give the file to write the private key to (it must not exist)")
			}
			keyPEM, csrPEM, err := tlscert.Request(cn, sans)
			if err != nil {
				return err
			}
			if err := atomicfile.WriteNew(keyFile, keyPEM, 0o600); err != nil {
				if errors.Is(err, fs.ErrExist) {
					return fmt.Errorf("--key %s exists; a request makes a new key: name another file, or remove it", keyFile)
				}
				return fmt.Errorf("--key: %w", err)
			}
			if csrFile == "" || csrFile == "-" {
				_, err = cmd.OutOrStdout().Write(csrPEM)
				return err
			}
			if err := atomicfile.Replace(csrFile, csrPEM, 0o644); err != nil {
				return fmt.Errorf("--csr: %w", err)
			}
			return nil
		},
	}
	f := request.Flags()
	f.StringVar(&cn, "cn", "", "the certificate's common name, usually the switch's DNS name")
	f.StringSliceVar(&sans, "san", nil, "a subject alternative name: a DNS name or an IP address (repeat, or separate with commas)")
	f.StringVar(&keyFile, "key", "", "file to write the new private key to (PEM, mode 0600; must not exist)")
	f.StringVar(&csrFile, "csr", "-", "file to write the certificate signing request to (PEM; - for standard output)")
	cmd.AddCommand(request)
	return cmd
}
