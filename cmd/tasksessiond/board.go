package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/board"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// boardCmd serves the read-only web board: a client of the daemon (started
// when none answers, like the other commands) and a web page on loopback.
func boardCmd(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("tasksessiond board", flag.ContinueOnError)
	fs.SetOutput(stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	dbPath := fs.String("db", "", "database a daemon started by the board serves (default: the daemon's own, env "+paths.EnvDB+")")
	addr := fs.String("addr", "127.0.0.1:0", "address to serve on, a loopback one (port 0: a free port)")
	port := fs.Int("port", -1, "port to serve on (overrides --addr's port; 0 picks a free one)")
	noStart := fs.Bool("no-autostart", !autostart.Enabled(), "do not start the daemon when none answers (env "+autostart.Env+"=0)")
	timeout := fs.Duration("timeout", 30*time.Second, "give up when the daemon has not answered within this long at start")
	verbose := fs.Bool("verbose", false, "log what the board does on stderr (by default only what is wrong)")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), `Usage: tasksessiond board [flags]

Serve a read-only web page with every session (newest first, each lineage of
compactions folded into one row) and one session's tasks as a board (pending,
in progress, completed; deleted behind a toggle), updated live within a second
of each change. It prints the URL to open, with a secret token made at each
start: requests without it, for another Host, or other than GET are refused.
It serves on 127.0.0.1 only, and stops with Ctrl-C.

Flags:
`)
		fs.PrintDefaults()
		fmt.Fprint(fs.Output(), `
Examples:
  tasksessiond board                 # prints http://127.0.0.1:PORT/?token=...
  tasksessiond board --port 8321
`)
	}
	if code, ok := parseFlags(fs, args, stdout); !ok {
		return code
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "tasksessiond board: takes no arguments, got %q\n", fs.Args())
		return 2
	}
	listen := *addr
	if *port >= 0 {
		host, _, err := net.SplitHostPort(*addr)
		if err != nil {
			fmt.Fprintf(stderr, "tasksessiond board: --addr %q: %v\n", *addr, err)
			return 2
		}
		listen = net.JoinHostPort(host, strconv.Itoa(*port))
	}
	level := slog.LevelWarn
	if *verbose {
		level = slog.LevelInfo
	}
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: level}))
	start := starter(*socket, *dbPath, *noStart)
	b, err := board.New(board.Config{Logger: log, Dial: func(ctx context.Context) (*client.Client, error) {
		return autostart.Dial(ctx, start)
	}})
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond board: %v\n", err)
		return 1
	}
	ln, err := board.Listen(listen)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond board: %v\n", err)
		return 1
	}
	defer ln.Close()
	cctx, cancel := context.WithTimeout(ctx, *timeout)
	err = b.Connect(cctx)
	cancel()
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond board: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "tasksessiond board: open %s\n", b.URL(ln))
	if err := b.Serve(ctx, ln); err != nil && !errors.Is(err, context.Canceled) {
		fmt.Fprintf(stderr, "tasksessiond board: %v\n", err)
		return 1
	}
	return 0
}
