package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/wire"
)

var snapshotCmd = &Command{
	Name: "snapshot", Args: "SESSION", Summary: "Print the text compaction would inject for a session (its whole task list). Changes nothing.",
	Example: "  tasksessiond snapshot S\n  tasksessiond snapshot S --json",
	nargs:   [2]int{1, 1},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON: tasks, nextTaskid, text")
		noFollow := fs.Bool("no-follow", false, "show a compacted session as it was sealed, not the newest of its lineage")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			id, err := head(ctx, e, c, args[0], !*noFollow)
			if err != nil {
				return err
			}
			snap, err := c.Snapshot(ctx, id)
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, snap)
			}
			fmt.Fprintln(e.Stdout, snap.Text)
			return nil
		}
	},
}

var compactCmd = &Command{
	Name: "compact", Args: "SESSION", Summary: "Compact a session: seal it and print its successor's id, which holds every task.\n" +
		"The successor's history starts with the injected messages and a forced TaskList (see --json).",
	Example: "  tasksessiond compact S\n  tasksessiond compact S --summary-file summary.txt --json",
	nargs:   [2]int{1, 1},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON: session, messages, forcedCall")
		summaryFile := fs.String("summary-file", "", "a file holding the summary to keep as a message of the successor (\"-\" for standard input)")
		newID := fs.String("new-id", "", "the successor's id (default: generated)")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			var summary string
			if *summaryFile != "" {
				var b []byte
				var err error
				if *summaryFile == "-" {
					b, err = io.ReadAll(e.stdin())
				} else {
					b, err = os.ReadFile(*summaryFile)
				}
				if err != nil {
					return fmt.Errorf("read summary: %w", err)
				}
				summary = string(b)
			}
			out, err := c.Compact(ctx, wire.Compact{SessionID: args[0], Summary: summary, NewSessionID: *newID})
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, out)
			}
			fmt.Fprintln(e.Stdout, out.Session.ID)
			return nil
		}
	},
}

var lineageCmd = &Command{
	Name: "lineage", Args: "SESSION", Summary: "Show the chain of compactions a session belongs to, oldest first.",
	Example: "  tasksessiond lineage S",
	nargs:   [2]int{1, 1},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print JSON")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			chain, err := lineage(ctx, c, args[0])
			if err != nil {
				return err
			}
			if *asJSON {
				return PrintJSON(e.Stdout, chain)
			}
			tw := table(e.Stdout)
			fmt.Fprintln(tw, "GEN\tID\tSTATUS\tTASKS\tOPEN\tCREATED")
			for i, s := range chain {
				mark := ""
				if s.ID == args[0] {
					mark = "  <-"
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%s%s\n", i+1, s.ID, s.Status, s.Counts.Total, s.Counts.Pending+s.Counts.InProgress,
					s.CreatedAt.Local().Format("2006-01-02 15:04"), mark)
			}
			return tw.Flush()
		}
	},
}

// lineage walks parentId back to the first generation and successorId
// forward to the newest.
func lineage(ctx context.Context, c *client.Client, id string) ([]tasksessiond.Session, error) {
	s, err := c.GetSession(ctx, id)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{s.ID: true}
	older, err := follow(ctx, c, s.ParentID, func(s tasksessiond.Session) string { return s.ParentID }, seen)
	if err != nil {
		return nil, err
	}
	newer, err := follow(ctx, c, s.SuccessorID, func(s tasksessiond.Session) string { return s.SuccessorID }, seen)
	if err != nil {
		return nil, err
	}
	slices.Reverse(older)
	return slices.Concat(older, []tasksessiond.Session{s}, newer), nil
}

// follow reads the sessions from id along next until it ends.
func follow(ctx context.Context, c *client.Client, id string, next func(tasksessiond.Session) string, seen map[string]bool) ([]tasksessiond.Session, error) {
	var out []tasksessiond.Session
	for id != "" {
		s, err := c.GetSession(ctx, id)
		if err != nil {
			return nil, err
		}
		if seen[s.ID] {
			return nil, errors.New("lineage loops")
		}
		seen[s.ID] = true
		out = append(out, s)
		id = next(s)
	}
	return out, nil
}
