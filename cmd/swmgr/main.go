// Command swmgr manages one network switch through a REST interface.
//
// One binary holds everything: `swmgr serve` runs the service, and helper
// subcommands work on its data directory. See README.md for every flag.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
)

func main() {
	root := &cobra.Command{
		Use:           "swmgr",
		Short:         "Manage a network switch through a REST interface",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.AddCommand(serveCommand(), dumpCommand(), versionCommand())
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "swmgr:", err)
		os.Exit(1)
	}
}
