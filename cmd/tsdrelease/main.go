// Command tsdrelease builds tasksessiond's release from this tree: a
// CGO_ENABLED=0 binary for each target, stamped with the version and the
// commit; an archive of each (also a Gemini CLI extension: its manifest
// at the root, named {platform}.{arch}.tasksessiond.tar.gz as Gemini
// CLI's release install looks for it); the npm packages (tasksessiond,
// one package per target holding its binary, and the OpenCode plugin),
// packed with npm pack; server.json, the MCP registry's entry for the npm
// package; and checksums.txt, the SHA-256 of each archive and tarball.
//
// The same commit and Go toolchain give the same bytes: -trimpath, no
// build id, no VCS stamp but ours, and every archive entry dated the
// commit's time (or $SOURCE_DATE_EPOCH) with no owner.
//
//	go run ./cmd/tsdrelease --version 1.2.3    # a release, from a clean tree
//	go run ./cmd/tsdrelease --snapshot         # what CI builds: <next>-snapshot.g<commit>
//
// The targets table below and npm/tasksessiond/package.json's
// optionalDependencies name the same packages; the build refuses when
// they differ.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime"
	"strings"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := run(ctx, os.Args[1:], os.Stdout, os.Stderr); err != nil {
		if !errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(os.Stderr, "tsdrelease:", err)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("tsdrelease", flag.ContinueOnError)
	fs.SetOutput(stderr)
	var c Config
	fs.StringVar(&c.Version, "version", "", "the release's version, e.g. 1.2.3 (a leading v is dropped); the tree must be clean")
	fs.BoolVar(&c.Snapshot, "snapshot", false, "a snapshot: npm/tasksessiond/package.json's version + \"-snapshot.g<commit>\", from any tree")
	fs.StringVar(&c.Out, "out", "dist", "the directory to write (replaced when it holds an earlier release)")
	only := fs.String("only", "", "build these targets only, GOOS/GOARCH, comma-separated (\"host\": this machine's)")
	fs.BoolVar(&c.NoPack, "no-pack", false, "stage the npm packages but do not run npm pack")
	fs.Usage = func() {
		fmt.Fprintln(fs.Output(), "Usage: go run ./cmd/tsdrelease --version V | --snapshot [--out dist] [--only GOOS/GOARCH,...]\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (c.Version == "") == !c.Snapshot {
		fs.Usage()
		return errors.New("give --version or --snapshot")
	}
	if *only != "" {
		for _, s := range strings.Split(*only, ",") {
			if s == "host" {
				s = runtime.GOOS + "/" + runtime.GOARCH
			}
			t, ok := findTarget(s)
			if !ok {
				return fmt.Errorf("--only: %q is not a target (%s)", s, targetList())
			}
			c.Targets = append(c.Targets, t)
		}
	}
	r, err := Build(ctx, c, stderr)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "tasksessiond %s (commit %s) in %s:\n", r.Version, r.Commit, r.Out)
	for _, f := range r.Files {
		fmt.Fprintf(stdout, "  %s  %s\n", f.SHA256, f.Name)
	}
	return nil
}
