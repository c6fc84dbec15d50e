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
	"sync/atomic"
	"time"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/wire"
)

var watchCmd = &Command{
	Name: "watch", Args: "SESSION", Summary: "Show a session's task list live, redrawn after each change; follows compaction to the successor. Ctrl-C stops.",
	Example: "  tasksessiond watch S\n  tasksessiond watch S --json     # one JSON event per line; a \"resync\" line holds the whole list where events were missed",
	nargs:   [2]int{1, 1}, Streams: true,
	flags: func(fs *flag.FlagSet) func(context.Context, *Env, *client.Client, []string) error {
		asJSON := fs.Bool("json", false, "print each event as a JSON line instead of redrawing the list")
		return func(ctx context.Context, e *Env, c *client.Client, args []string) error {
			w := &watching{e: e, c: c, json: *asJSON, tty: isTerminal(e.Stdout)}
			defer func() { w.c.Close() }() // the last connection it made
			err := w.run(ctx, args[0])
			if ctx.Err() != nil {
				return nil // Ctrl-C: whatever was under way
			}
			return err
		}
	},
}

// watching is one watch: a connection subscribed to the newest session of
// a lineage. It never loses a compaction: a notice it missed (dropped by a
// busy terminal, or with a connection the daemon closed because it fell
// behind) is made up for by looking up the lineage's head again.
type watching struct {
	e      *Env
	c      *client.Client
	events chan client.Notification
	missed atomic.Bool // a notice was dropped: redraw from the daemon's state
	id     string
	json   bool
	tty    bool
	// last is the seq of the newest change of id that --json has printed,
	// as an event or in a resync line's list: an event of no greater seq
	// is not printed again. The list a watch starts from is not printed,
	// so it sets no last: a change committed after the watch subscribed
	// but before that list was read is printed as its event.
	last int64
	// started is set once the first list has been read: with --json,
	// every later read prints the list (a resync line).
	started bool
}

func (w *watching) run(ctx context.Context, from string) error {
	id, err := head(ctx, w.e, w.c, from, true)
	if err != nil {
		return err
	}
	w.id = id
	if err := w.subscribe(ctx); err != nil {
		return err
	}
	if err := w.draw(ctx, ""); err != nil {
		return err
	}
	catchUp := time.NewTicker(time.Second)
	defer catchUp.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-catchUp.C:
			if w.missed.Swap(false) {
				if err := w.draw(ctx, "caught up"); err != nil && !errors.Is(err, client.ErrClosed) {
					return err
				}
			}
		case <-w.c.Done():
			// The daemon closed the connection: it fell behind (with or
			// without a watchLagged notice), or the daemon stopped.
			if err := w.resync(ctx, "reconnected"); err != nil {
				return fmt.Errorf("stopped watching session %s: %w (is the daemon still running?)", w.id, err)
			}
		case n := <-w.events:
			if w.json {
				err := w.jsonEvent(ctx, n)
				if errors.Is(err, client.ErrClosed) {
					err = w.resync(ctx, "reconnected")
				}
				if err != nil {
					return fmt.Errorf("stopped watching session %s: %w (is the daemon still running?)", w.id, err)
				}
				continue
			}
			ev, err := client.DecodeEvent(n)
			if err != nil {
				continue
			}
			note := ""
			switch n.Method {
			case client.NotifyWatchLagged:
				if err := w.resync(ctx, "fell behind; caught up"); err != nil {
					return fmt.Errorf("this watch fell behind the changes to session %s and could not catch up: %w", w.id, err)
				}
				continue
			case client.NotifySessionCompacted:
				note = fmt.Sprintf("session %s was compacted; following its successor %s", w.id, ev.SuccessorID)
			case client.NotifyTasksChanged:
				if ev.Task != nil {
					note = fmt.Sprintf("%s #%d [%s] %s", ev.Op, ev.Task.Taskid, ev.Task.Status, oneLine(ev.Task.Subject, 60))
				}
			}
			if err := w.draw(ctx, note); errors.Is(err, client.ErrClosed) {
				if err := w.resync(ctx, "reconnected"); err != nil {
					return fmt.Errorf("stopped watching session %s: %w (is the daemon still running?)", w.id, err)
				}
			} else if err != nil {
				return err
			}
		}
	}
}

// subscribe watches w.id on w.c, with a fresh queue.
func (w *watching) subscribe(ctx context.Context) error {
	events := make(chan client.Notification, 256)
	w.c.OnNotification(func(n client.Notification) {
		select {
		case events <- n:
		default:
			// The terminal is behind: a redraw soon shows the state (and
			// follows a compaction whose notice this was).
			w.missed.Store(true)
		}
	})
	w.events = events
	return w.c.Watch(ctx, w.id)
}

// resync connects again and watches the lineage's head from now on. A
// connection closed again while catching up (still behind a burst) is
// retried; a daemon that does not answer ends it.
func (w *watching) resync(ctx context.Context, why string) error {
	var err error
	for attempt := range 50 {
		if err = w.reconnect(ctx, why); !errors.Is(err, client.ErrClosed) {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(time.Duration(attempt+1) * 10 * time.Millisecond):
		}
	}
	return err
}

func (w *watching) reconnect(ctx context.Context, why string) error {
	w.c.Close()
	dial := w.e.Dial
	if dial == nil {
		dial = client.Dial
	}
	c, err := dial(ctx, w.e.socket)
	if err != nil {
		return err
	}
	w.c = c
	if err := w.subscribe(ctx); err != nil {
		return err
	}
	return w.draw(ctx, why)
}

// draw follows the lineage to its head when it has moved on (a missed
// compaction notice), then redraws (or, with --json, only follows).
func (w *watching) draw(ctx context.Context, note string) error {
	s, err := w.c.Head(ctx, w.id)
	if err != nil {
		return err
	}
	if s.ID != w.id {
		if note == "" || !strings.Contains(note, s.ID) {
			note = fmt.Sprintf("session %s was compacted; following the newest of its lineage, %s", w.id, s.ID)
		}
		w.id, w.last = s.ID, 0
		if err := w.c.Watch(ctx, w.id); err != nil {
			return err
		}
	}
	if w.json {
		return w.sync(ctx, note)
	}
	return drawList(ctx, w.e.Stdout, w.c, w.id, note, w.tty)
}

// jsonEvent prints a notification as a JSON line (--json), unless the
// list last read already holds it. A watch that missed notices (dropped
// here, or by the daemon) first resynchronises with the whole list; a
// compaction is followed to the successor at once.
func (w *watching) jsonEvent(ctx context.Context, n client.Notification) error {
	if w.missed.Swap(false) {
		if err := w.draw(ctx, "missed changes; caught up"); err != nil {
			return err
		}
	}
	ev, err := client.DecodeEvent(n)
	if err != nil {
		return nil
	}
	switch n.Method {
	case client.NotifyWatchLagged:
		return w.resync(ctx, "fell behind; caught up")
	case client.NotifySessionCompacted:
		if ev.SessionID != w.id {
			return nil // a session this watch has left
		}
		w.printEvent(n.Method, ev)
		w.id, w.last = ev.SuccessorID, 0
		if err := w.c.Watch(ctx, w.id); err != nil {
			return err
		}
		return w.draw(ctx, "") // follows on if it was compacted again
	case client.NotifyTasksChanged:
		if ev.SessionID != w.id || ev.Seq <= w.last {
			return nil
		}
		w.last = ev.Seq
		w.printEvent(n.Method, ev)
	}
	return nil
}

func (w *watching) printEvent(method string, ev wire.Event) {
	json.NewEncoder(w.e.Stdout).Encode(struct {
		Method string `json:"method"`
		wire.Event
	}{method, ev})
}

// sync reads w.id's list, which a watch already set up will follow with
// every later change. With --json it prints it as a "resync" line when
// changes may have gone unprinted: after missed notices (note says why),
// and after a compaction when the successor changed before this watch
// followed it (its forced TaskList, seq 1, is its only call until then).
func (w *watching) sync(ctx context.Context, note string) error {
	r, err := w.c.ResumeSession(ctx, w.id)
	if err != nil {
		return err
	}
	first := !w.started
	w.started = true
	if note == "" && r.LastSeq > 1 && !first {
		note = "the successor changed before this watch followed it"
	}
	if note != "" && !first {
		json.NewEncoder(w.e.Stdout).Encode(struct {
			Method    string              `json:"method"`
			SessionID string              `json:"sessionId"`
			LastSeq   int64               `json:"lastSeq"`
			Note      string              `json:"note"`
			Tasks     []tasksessiond.Task `json:"tasks"`
		}{"resync", w.id, r.LastSeq, note, r.Tasks})
	}
	if !first {
		w.last = max(w.last, r.LastSeq)
	}
	return nil
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
					Session    tasksessiond.Session `json:"session"`
					Tasks      []tasksessiond.Task  `json:"tasks"`
					NextTaskid int                  `json:"nextTaskid"`
				}{r.Session, r.Tasks, r.NextTaskid})
			}
			_, err = io.WriteString(e.Stdout, Markdown(r.Session, r.Tasks))
			return err
		}
	},
}

// Markdown renders tasks as a checklist: completed ticked, deleted struck
// through, in progress marked.
func Markdown(s tasksessiond.Session, tasks []tasksessiond.Task) string {
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
