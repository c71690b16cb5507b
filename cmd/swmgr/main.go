// Command swmgr manages one network switch through a REST interface.
//
// One binary holds everything: `swmgr serve` runs the service, and helper
// subcommands work on its data directory. See README.md for every flag.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/model"
)

func main() {
	root := &cobra.Command{
		Use:           "swmgr",
		Short:         "Manage a network switch through a REST interface",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), dumpCommand(), docsCommand(), versionCommand(), configCommand(), cliCommand())
	if args := loginShellArgs(os.Args); args != nil {
		root.SetArgs(args)
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "swmgr:", err)
		os.Exit(1)
	}
}

func docsCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "docs",
		Short: "Print the object reference (docs/objects.md) generated from the model",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			fmt.Fprint(cmd.OutOrStdout(), model.Builtin().Markdown())
		},
	}
}
