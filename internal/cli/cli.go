// Package cli is the command line for people: subcommands that talk to the
// running daemon through the client package and print tables or JSON.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Env is what a command runs with.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Dial connects to the daemon at socket; nil is client.Dial. The
	// tasksessiond command starts the daemon here when none answers.
	Dial func(ctx context.Context, socket string) (*client.Client, error)

	socket string // the command's --socket, for commands that reconnect
}

// Command is one subcommand. Most talk to the running daemon through a
// client (flags, then a connection); a command with Main runs on its own
// (serve, mcp, hook, fsck and the rest, which package main declares).
type Command struct {
	Name    string
	Args    string // the positional arguments, for usage
	Summary string
	Example string
	// Group is the heading help lists the command under.
	Group string
	// Main runs a command that is not a client of the daemon; it returns
	// the exit code and handles its own flags and --help.
	Main  func(ctx context.Context, e *Env, args []string) int
	flags func(fs *flag.FlagSet) func(ctx context.Context, e *Env, c *client.Client, args []string) error
	nargs [2]int // min, max positional arguments
	// NoAutostart: the command reports on the daemon, so it does not
	// start one (status says "not running" rather than starting it).
	NoAutostart bool
	// Streams: the command runs until interrupted (watch), so --timeout
	// bounds only its connecting.
	Streams bool
}

// DefaultTimeout bounds a command's wait for the daemon.
const DefaultTimeout = 30 * time.Second

// GroupClient is the help heading of the commands that talk to a
// running daemon.
const GroupClient = "Talking to a running daemon"

// Commands are the client subcommands, in the order help lists them.
var Commands = []*Command{statusCmd, sessionsCmd, newCmd, tasksCmd, callCmd, watchCmd, exportCmd, snapshotCmd, compactCmd, lineageCmd}

func init() {
	for _, c := range Commands {
		c.Group = GroupClient
	}
}

// Run parses args (after the subcommand name) and runs the command. It
// returns the process exit code: 0 ok, 1 failed, 2 bad usage.
func (cmd *Command) Run(ctx context.Context, e *Env, args []string) int {
	if cmd.Main != nil {
		return cmd.Main(ctx, e, args)
	}
	fs := flag.NewFlagSet("tasksessiond "+cmd.Name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	socket := fs.String("socket", paths.Socket(), "daemon socket (env "+paths.EnvSocket+")")
	timeout := fs.Duration("timeout", DefaultTimeout, "give up when the daemon has not answered within this long")
	run := cmd.flags(fs)
	if WantsHelp(args) {
		fs.SetOutput(e.Stdout) // asked for: the answer, on standard output
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: tasksessiond %s [flags] %s\n\n%s\n\nFlags:\n", cmd.Name, cmd.Args, cmd.Summary)
		fs.PrintDefaults()
		if cmd.Example != "" {
			fmt.Fprintf(fs.Output(), "\nExamples:\n%s\n", cmd.Example)
		}
	}
	pos, err := ParseArgs(fs, args)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		return 2
	}
	if len(pos) < cmd.nargs[0] || len(pos) > cmd.nargs[1] {
		fmt.Fprintf(e.Stderr, "tasksessiond %s: expected %s\n", cmd.Name, cmd.Args)
		fs.Usage()
		return 2
	}
	dial := e.Dial
	if dial == nil || cmd.NoAutostart {
		dial = client.Dial
	}
	e.socket = *socket
	tctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	c, err := dial(tctx, *socket)
	if err != nil {
		fmt.Fprintf(e.Stderr, "tasksessiond %s: %v\n", cmd.Name, cmd.timedOut(tctx, ctx, err, *socket, *timeout))
		return 1
	}
	defer c.Close()
	if cmd.Streams {
		tctx = ctx
	}
	if err := run(tctx, e, c, pos); err != nil {
		fmt.Fprintf(e.Stderr, "tasksessiond %s: %v\n", cmd.Name, cmd.timedOut(tctx, ctx, err, *socket, *timeout))
		return 1
	}
	return 0
}

// timedOut words an error that the timeout (not the user, not the daemon)
// caused.
func (cmd *Command) timedOut(tctx, ctx context.Context, err error, socket string, d time.Duration) error {
	if ctx.Err() == nil && errors.Is(tctx.Err(), context.DeadlineExceeded) {
		return fmt.Errorf("the daemon at %s did not answer within %v (is it stopped, or overloaded? --timeout waits longer)", socket, d)
	}
	return err
}

// WantsHelp reports whether args ask for help (-h, -help, --help) before
// any "--".
func WantsHelp(args []string) bool {
	for _, a := range args {
		switch a {
		case "--":
			return false
		case "-h", "-help", "--help":
			return true
		}
	}
	return false
}

// ParseArgs parses fs and lets flags come after positional arguments too
// ("tasks SESSION --json"); "--" ends the flags.
func ParseArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// PrintJSON writes v as indented JSON.
func PrintJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max-1]) + "…"
	}
	return s
}

var statusCmd = &Command{
	Name: "status", Summary: "Show whether the daemon is running, its database and what it serves.",
	Example: "  tasksessiond status\n  tasksessiond status --json",
	nargs:   [2]int{0, 0}, NoAutostart: true,
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(ctx context.Context, e *Env, c *client.Client, _ []string) error {
			st, err := c.Status(ctx)
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, st)
			}
			tw := table(e.Stdout)
			fmt.Fprintf(tw, "version\t%s\n", st.Version)
			fmt.Fprintf(tw, "pid\t%d\n", st.PID)
			fmt.Fprintf(tw, "uptime\t%s\n", st.Uptime)
			fmt.Fprintf(tw, "database\t%s\n", st.Database)
			fmt.Fprintf(tw, "socket\t%s\n", st.Socket)
			fmt.Fprintf(tw, "sessions\t%d loaded, %d in total\n", st.Sessions.Loaded, st.Sessions.Total)
			fmt.Fprintf(tw, "calls served\t%d\n", st.CallsServed)
			if st.WAL != nil {
				fmt.Fprintf(tw, "wal\t%d bytes, %d of %d frames checkpointed\n", st.WAL.Bytes, st.WAL.Checkpointed, st.WAL.Frames)
			}
			if st.Fleet != nil {
				fmt.Fprintf(tw, "lease owner\t%s\n", st.Fleet.LeaseOwner)
				fmt.Fprintf(tw, "leases held\t%d (lease %s)\n", st.Fleet.LeasesHeld, st.Fleet.Lease)
			}
			for _, r := range st.Refused {
				fmt.Fprintf(tw, "REFUSED\t%s\n", r.Reason)
			}
			if st.Problem != "" {
				fmt.Fprintf(tw, "PROBLEM\t%s\n", st.Problem)
			}
			return tw.Flush()
		}
	},
}

var sessionsCmd = &Command{
	Name: "sessions", Summary: "List sessions, newest first.",
	Example: "  tasksessiond sessions\n  tasksessiond sessions --status active --limit 10\n  tasksessiond sessions --json",
	nargs:   [2]int{0, 0},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		status := fs.String("status", "", "only sessions with this status: active or compacted")
		limit := fs.Int("limit", 50, "at most this many sessions")
		return func(ctx context.Context, e *Env, c *client.Client, _ []string) error {
			list, _, err := c.ListSessions(ctx, tasksessiond.ListFilter{Status: *status, Limit: *limit})
			if err != nil {
				return err
			}
			if *asJSON {
				if list == nil {
					list = []tasksessiond.Session{}
				}
				return PrintJSON(e.Stdout, list)
			}
			if len(list) == 0 {
				fmt.Fprintln(e.Stdout, "No sessions yet. Create one with: tasksessiond new --title \"my work\"")
				return nil
			}
			tw := table(e.Stdout)
			fmt.Fprintln(tw, "ID\tSTATUS\tTASKS\tOPEN\tUPDATED\tTITLE")
			var refused []string
			for _, s := range list {
				status := s.Status
				if s.Refused != "" {
					status, refused = "refused", append(refused, s.Refused)
				}
				fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", s.ID, status, s.Counts.Total, s.Counts.Pending+s.Counts.InProgress,
					s.UpdatedAt.Local().Format("2006-01-02 15:04"), oneLine(s.Title, 40))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, why := range refused {
				fmt.Fprintln(e.Stdout, why)
			}
			return nil
		}
	},
}

var newCmd = &Command{
	Name: "new", Summary: "Create a session and print its id.",
	Example: "  tasksessiond new --title \"refactor the parser\"\n  tasksessiond new --id my-session",
	nargs:   [2]int{0, 0},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		title := fs.String("title", "", "a title for people")
		id := fs.String("id", "", "the session id (default: generated)")
		return func(ctx context.Context, e *Env, c *client.Client, _ []string) error {
			s, err := c.CreateSession(ctx, wire.CreateSession{SessionID: *id, Title: *title})
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, s)
			}
			fmt.Fprintln(e.Stdout, s.ID)
			return nil
		}
	},
}

var tasksCmd = &Command{
	Name: "tasks", Args: "SESSION", Summary: "Show a session's task list (loading the session if the daemon does not hold it).",
	Example: "  tasksessiond tasks 0193a1b2-...\n  tasksessiond tasks my-session --json",
	nargs:   [2]int{1, 1},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		noFollow := fs.Bool("no-follow", false, "show a compacted session's own list as it was sealed, not its successor's")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			id, err := head(ctx, e, c, args[0], !*noFollow)
			if err != nil {
				return err
			}
			r, err := c.ResumeSession(ctx, id)
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, r.Tasks)
			}
			if len(r.Tasks) == 0 {
				fmt.Fprintf(e.Stdout, "Session %s has no tasks yet.\n", id)
				return nil
			}
			tw := table(e.Stdout)
			fmt.Fprintln(tw, "ID\tSTATUS\tSUBJECT")
			for _, t := range r.Tasks {
				fmt.Fprintf(tw, "%d\t%s\t%s\n", t.Taskid, t.Status, oneLine(t.Subject, 80))
			}
			n := r.Session.Counts
			fmt.Fprintf(tw, "\n%d tasks: %d pending, %d inprogress, %d completed, %d deleted\n", n.Total, n.Pending, n.InProgress, n.Completed, n.Deleted)
			return tw.Flush()
		}
	},
}

// head resolves id to the newest session of its lineage when follow is set,
// and says so on stderr when that is another session: after a compaction
// the successor holds the list, and the old id is what people remember.
func head(ctx context.Context, e *Env, c *client.Client, id string, follow bool) (string, error) {
	s, err := c.Head(ctx, id)
	if err != nil {
		return "", err
	}
	if s.ID == id {
		return id, nil
	}
	if !follow {
		fmt.Fprintf(e.Stderr, "session %s was compacted into %s; showing %s as it was sealed\n", id, s.ID, id)
		return id, nil
	}
	fmt.Fprintf(e.Stderr, "session %s was compacted; showing the newest of its lineage, %s (--no-follow shows %s as sealed)\n", id, s.ID, id)
	return s.ID, nil
}

var callCmd = &Command{
	Name: "call", Args: "SESSION TOOL [JSON]", Summary: "Call a Task tool in a session, as a model would, and print its result.\nJSON is the arguments object; \"-\" reads it from standard input.",
	Example: "  tasksessiond call S TaskCreate '{\"subject\":\"Write the tests\"}'\n" +
		"  tasksessiond call S TaskUpdate '{\"taskid\":1,\"status\":\"inprogress\"}'\n" +
		"  tasksessiond call S TaskList",
	nargs: [2]int{2, 3},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print the whole CallToolResult as JSON")
		callID := fs.String("call-id", "", "the call's id; a retry with the same id returns the recorded result")
		role := fs.String("role", "", "agent (default) or compact_worker")
		noFollow := fs.Bool("no-follow", false, "call a compacted session itself (reads show it as sealed; writes are refused), not its successor")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			id, err := head(ctx, e, c, args[0], !*noFollow)
			if err != nil {
				return err
			}
			var arguments any = map[string]any{}
			if len(args) == 3 {
				text := args[2]
				if text == "-" {
					b, err := io.ReadAll(e.stdin())
					if err != nil {
						return fmt.Errorf("read arguments: %w", err)
					}
					text = string(b)
				}
				if !json.Valid([]byte(text)) {
					return fmt.Errorf("arguments are not valid JSON: %s (quote them for the shell, e.g. '{\"subject\":\"x\"}')", text)
				}
				arguments = json.RawMessage(text)
			}
			r, err := c.CallTool(ctx, client.ToolCall{SessionID: id, Name: args[1], Arguments: arguments, CallID: *callID, Role: *role})
			if err != nil {
				return err
			}
			if *asJSON {
				var v any
				json.Unmarshal(r.Raw, &v)
				return PrintJSON(e.Stdout, v)
			}
			fmt.Fprintln(e.Stdout, r.Text())
			if r.IsError {
				return errors.New("the tool reported an error")
			}
			return nil
		}
	},
}

// stdin is the command's standard input: the process's unless the caller
// gave one.
func (e *Env) stdin() io.Reader {
	if e.Stdin != nil {
		return e.Stdin
	}
	return os.Stdin
}

// Lookup returns the client command name, or nil.
func Lookup(name string) *Command {
	for _, c := range Commands {
		if c.Name == name {
			return c
		}
	}
	return nil
}
