package cli

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
)

var watchCmd = &Command{
	Name: "watch", Args: "SESSION", Summary: "Show a session's task list live, redrawn after each change; follows compaction to the successor. Ctrl-C stops.",
	Example: "  tasksessiond watch S\n  tasksessiond watch S --json     # one JSON event per line",
	nargs:   [2]int{1, 1}, Streams: true,
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print each event as a JSON line instead of redrawing the list")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			events := make(chan client.Notification, 256)
			c.OnNotification(func(n client.Notification) {
				select {
				case events <- n:
				default: // the terminal is behind; the next redraw shows the state anyway
				}
			})
			id, err := head(ctx, e, c, args[0], true)
			if err != nil {
				return err
			}
			if err := c.Watch(ctx, id); err != nil {
				return err
			}
			tty := isTerminal(e.Stdout)
			if !*asJSON {
				if err := drawList(ctx, e.Stdout, c, id, "", tty); err != nil {
					return err
				}
			}
			for {
				select {
				case <-ctx.Done():
					return nil
				case <-c.Done():
					return fmt.Errorf("stopped watching session %s: %w (is the daemon still running?)", id, c.Err())
				case n := <-events:
					ev, err := client.DecodeEvent(n)
					if err != nil {
						continue
					}
					if *asJSON {
						json.NewEncoder(e.Stdout).Encode(struct {
							Method string `json:"method"`
							client.Event
						}{n.Method, ev})
					}
					note := ""
					switch n.Method {
					case client.NotifySessionCompacted:
						note = fmt.Sprintf("session %s was compacted; following its successor %s", id, ev.SuccessorID)
						id = ev.SuccessorID
						if err := c.Watch(ctx, id); err != nil {
							return err
						}
					case client.NotifyWatchLagged:
						return fmt.Errorf("this watch fell too far behind the changes to session %s and the daemon closed it; run it again", id)
					case client.NotifyTasksChanged:
						if ev.Task != nil {
							note = fmt.Sprintf("%s #%d [%s] %s", ev.Op, ev.Task.Taskid, ev.Task.Status, oneLine(ev.Task.Subject, 60))
						}
					}
					if *asJSON {
						continue
					}
					if err := drawList(ctx, e.Stdout, c, id, note, tty); err != nil {
						return err
					}
				}
			}
		}
	},
}

// drawList prints the session's list, clearing the screen first on a terminal.
func drawList(ctx context.Context, w io.Writer, c *client.Client, id, note string, tty bool) error {
	r, err := c.ResumeSession(ctx, id)
	if err != nil {
		return err
	}
	var b strings.Builder
	if tty {
		b.WriteString("\033[H\033[2J")
	}
	fmt.Fprintf(&b, "session %s", id)
	if note != "" {
		fmt.Fprintf(&b, " — %s", note)
	}
	b.WriteString("\n\n")
	tw := table(&b)
	fmt.Fprintln(tw, "ID\tSTATUS\tSUBJECT")
	for _, t := range r.Tasks {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", t.Taskid, t.Status, oneLine(t.Subject, 80))
	}
	tw.Flush()
	n := r.Session.Counts
	fmt.Fprintf(&b, "\n%d tasks: %d pending, %d inprogress, %d completed, %d deleted\n\n", n.Total, n.Pending, n.InProgress, n.Completed, n.Deleted)
	_, err = io.WriteString(w, b.String())
	return err
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

var exportCmd = &Command{
	Name: "export", Args: "SESSION", Summary: "Print a session's tasks as JSON or as a Markdown checklist.",
	Example: "  tasksessiond export S --format markdown > TODO.md\n  tasksessiond export S --format json",
	nargs:   [2]int{1, 1},
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		format := fs.String("format", "markdown", "markdown or json")
		noFollow := fs.Bool("no-follow", false, "export a compacted session's own list as it was sealed, not its successor's")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			if *format != "markdown" && *format != "json" {
				return fmt.Errorf("--format must be markdown or json, got %q", *format)
			}
			id, err := head(ctx, e, c, args[0], !*noFollow)
			if err != nil {
				return err
			}
			r, err := c.ResumeSession(ctx, id)
			if err != nil {
				return err
			}
			if *format == "json" {
				return PrintJSON(e.Stdout, struct {
					Session    client.Session `json:"session"`
					Tasks      []client.Task  `json:"tasks"`
					NextTaskid int            `json:"nextTaskid"`
				}{r.Session, r.Tasks, r.NextTaskid})
			}
			_, err = io.WriteString(e.Stdout, Markdown(r.Session, r.Tasks))
			return err
		}
	},
}

// Markdown renders tasks as a checklist: completed ticked, deleted struck
// through, in progress marked.
func Markdown(s client.Session, tasks []client.Task) string {
	var b strings.Builder
	title := s.Title
	if title == "" {
		title = "Session " + s.ID
	}
	fmt.Fprintf(&b, "# %s\n\n", title)
	if len(tasks) == 0 {
		b.WriteString("_No tasks._\n")
	}
	for _, t := range tasks {
		box, subject, tail := "[ ]", oneLine(t.Subject, 500), ""
		switch t.Status {
		case "completed":
			box = "[x]"
		case "deleted":
			subject, tail = "~~"+subject+"~~", " (deleted)"
		case "inprogress":
			tail = " (in progress)"
		}
		fmt.Fprintf(&b, "- %s #%d %s%s\n", box, t.Taskid, subject, tail)
		for _, line := range strings.Split(strings.TrimRight(t.Description, "\n"), "\n") {
			if line != "" {
				fmt.Fprintf(&b, "  %s\n", line)
			}
		}
	}
	return b.String()
}
