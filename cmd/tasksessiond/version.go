package main

import (
	"flag"
	"fmt"
	"io"
	"runtime/debug"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/cli"
)

// buildVersion is this binary's version and commit: the stamped ones of a
// release build, else what the Go toolchain recorded (the module's version
// after "go install ...@v1.2.3", the VCS revision of a build in a clone);
// the version is "devel" when none is known, so "version", "status" and
// the MCP server all name the same one.
func buildVersion() (v, c string) {
	v, c = version, commit
	if info, ok := debug.ReadBuildInfo(); ok {
		if v == "" && info.Main.Version != "" && info.Main.Version != "(devel)" {
			v = strings.TrimPrefix(info.Main.Version, "v")
		}
		if c == "" {
			var modified bool
			for _, s := range info.Settings {
				switch s.Key {
				case "vcs.revision":
					c = s.Value
				case "vcs.modified":
					modified = s.Value == "true"
				}
			}
			if c != "" && modified {
				c += "-dirty"
			}
		}
	}
	if v == "" {
		v = "devel"
	}
	return v, c
}

// versionLine is what "tasksessiond version" prints.
func versionLine() string {
	v, c := buildVersion()
	if c == "" {
		return "tasksessiond " + v
	}
	return "tasksessiond " + v + " (commit " + c + ")"
}

// daemonVersion is the version the daemon reports in its status and the
// MCP server to its host.
func daemonVersion() string {
	v, _ := buildVersion()
	return v
}

func versionCmd(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	asJSON := fs.Bool("json", false, `print JSON: {"version", "commit"}`)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond version [flags]

Print this binary's version and commit: a release's stamped ones, else what
the Go toolchain recorded ("go install ...@v1.2.3", or a clone's revision),
else "devel".

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  tasksessiond version           # tasksessiond 1.2.3 (commit 0123abcd...)
  tasksessiond version --json
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tasksessiond version: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	if *asJSON {
		v, c := buildVersion()
		if err := cli.PrintJSON(stdout, struct {
			Version string `json:"version"`
			Commit  string `json:"commit,omitempty"`
		}{v, c}); err != nil {
			fmt.Fprintf(stderr, "tasksessiond version: %v\n", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(stdout, versionLine())
	return 0
}
