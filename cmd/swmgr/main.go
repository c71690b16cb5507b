// Command swmgr manages one network switch through a REST interface.
//
// One binary holds everything: `swmgr serve` runs the service, and helper
// subcommands work on its data directory. See README.md for every flag.
package main

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/swmgr/swmgr/internal/ansible"
	"github.com/swmgr/swmgr/internal/model"
	"github.com/swmgr/swmgr/internal/openapi"
)

func main() {
	root := rootCommand()
	if args := loginShellArgs(os.Args); args != nil {
		root.SetArgs(args)
	}
	if err := root.Execute(); err != nil {
		fmt.Fprintln(os.Stderr, "swmgr:", err)
		os.Exit(1)
	}
}

func rootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:           "swmgr",
		Short:         "Manage a network switch through a REST interface",
		SilenceUsage:  true,
		SilenceErrors: true,
		Version:       version(),
	}
	root.SetVersionTemplate(versionLine())
	root.AddCommand(serveCommand(), dumpCommand(), docsCommand(), openapiCommand(), ansibleCommand(), certCommand(), versionCommand(), configCommand(), manCommand(), cliCommand(), osActivateCommand(), packageCommand())
	return root
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

func openapiCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "openapi",
		Short: "Print the OpenAPI 3.1 document (docs/openapi.json) generated from the model",
		Long:  "Print the OpenAPI 3.1 document of the REST interface, generated from the object model; a running server serves the same at " + openapi.Path + ".",
		Args:  cobra.NoArgs,
		Run: func(cmd *cobra.Command, _ []string) {
			cmd.OutOrStdout().Write(openapi.JSON(model.Builtin()))
		},
	}
}

// ansibleCommand writes the parts of the Ansible collection that follow
// from the model into the collection's directory.
func ansibleCommand() *cobra.Command {
	var dir string
	cmd := &cobra.Command{
		Use:   "ansible",
		Short: "Write the generated modules of the Ansible collection swmgr.switch (" + ansible.Dir + ")",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			files, err := ansible.Files(model.Builtin())
			if err != nil {
				return err
			}
			return ansible.Write(dir, files)
		},
	}
	cmd.Flags().StringVar(&dir, "out", ansible.Dir, "the collection's directory")
	return cmd
}
