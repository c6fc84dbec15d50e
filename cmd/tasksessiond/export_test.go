package main

import (
	"context"
	"io"

	"github.com/tasksessiond/tasksessiond/internal/cli"
)

// Run runs a subcommand in this process, for the tests of package
// main_test.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	return runWith(ctx, args, &cli.Env{Stdin: stdin, Stdout: stdout, Stderr: stderr})
}

// CommandNames are the names in the command table, in help's order.
func CommandNames() []string {
	var names []string
	for _, c := range commands() {
		names = append(names, c.Name)
	}
	return names
}

// HostParent is hostParent, for package main_test.
var HostParent = hostParent
