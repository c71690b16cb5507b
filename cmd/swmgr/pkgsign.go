package main

import (
	"crypto/ed25519"
	"fmt"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/atomicfile"
	"github.com/swmgr/swmgr/internal/debsig"
)

// packageCommand signs swmgr's Debian packages for OS.Install's check
// (serve --os-signing-key) and makes the keys it signs with.
func packageCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "package",
		Short: "Sign swmgr .deb packages (Ed25519) for gNOI OS.Install, and make signing keys",
	}
	var privFile, pubFile string
	keygen := &cobra.Command{
		Use:   "keygen --private FILE --public FILE",
		Short: "Make an Ed25519 signing key: the private key (PEM PKCS#8, mode 0600) and the public key that serve --os-signing-key reads",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if privFile == "" || pubFile == "" {
				return fmt.Errorf("--private and --public are required")
			}
			privPEM, pubPEM, err := debsig.GenerateKey()
			if err != nil {
				return err
			}
			if _, err := os.Lstat(privFile); err == nil {
				return fmt.Errorf("%s exists: not overwritten", privFile)
			}
			if err := atomicfile.Replace(privFile, privPEM, 0o600); err != nil {
				return fmt.Errorf("write the private key: %w", err)
			}
			if err := atomicfile.Replace(pubFile, pubPEM, 0o644); err != nil {
				return fmt.Errorf("write the public key: %w", err)
			}
			pub, _ := debsig.ParsePublicKey(pubPEM)
			fmt.Fprintf(cmd.OutOrStdout(), "key %s\n", debsig.KeyID(pub))
			return nil
		},
	}
	keygen.Flags().StringVar(&privFile, "private", "", "where to write the private key (kept secret: the signer's)")
	keygen.Flags().StringVar(&pubFile, "public", "", "where to write the public key (for serve --os-signing-key)")

	var keyFile, out string
	sign := &cobra.Command{
		Use:   "sign --key FILE PACKAGE.deb",
		Short: "Sign a .deb: append the _swmgr_sig member (the SHA-256 of its members, signed with the key's Ed25519); dpkg reads it as before",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if keyFile == "" {
				return fmt.Errorf("--key is required (the private key's file, as swmgr package keygen writes it)")
			}
			b, err := os.ReadFile(keyFile)
			if err != nil {
				return fmt.Errorf("signing key: %w", err)
			}
			key, err := debsig.ParsePrivateKey(b)
			if err != nil {
				return fmt.Errorf("signing key %s: %w", keyFile, err)
			}
			deb, err := os.ReadFile(args[0])
			if err != nil {
				return err
			}
			signed, err := debsig.Sign(deb, key)
			if err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			dst := out
			if dst == "" {
				dst = args[0]
			}
			if err := atomicfile.Replace(dst, signed, 0o644); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s signed with key %s\n", filepath.Base(dst), debsig.KeyID(key.Public().(ed25519.PublicKey)))
			return nil
		},
	}
	sign.Flags().StringVar(&keyFile, "key", "", "the private key's file (PEM PKCS#8 Ed25519)")
	sign.Flags().StringVarP(&out, "out", "o", "", "write the signed package here (default: in place)")

	var verifyKey string
	verify := &cobra.Command{
		Use:   "verify --key PUBLIC PACKAGE.deb",
		Short: "Check a .deb's signature as OS.Install does with serve --os-signing-key",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			pub, err := debsig.LoadPublicKey(verifyKey)
			if err != nil {
				return err
			}
			if err := debsig.VerifyFile(args[0], pub); err != nil {
				return fmt.Errorf("%s: %w", args[0], err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%s: signed by key %s\n", filepath.Base(args[0]), debsig.KeyID(pub))
			return nil
		},
	}
	verify.Flags().StringVar(&verifyKey, "key", "", "the public key's file")
	cmd.AddCommand(keygen, sign, verify)
	return cmd
}
