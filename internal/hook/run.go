package hook

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"

	"github.com/tasksessiond/tasksessiond"
	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/binding"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// Config is where the hook finds its daemon and session, and how it talks
// to the model.
type Config struct {
	// Dial connects to the daemon (and may start it).
	Dial func(ctx context.Context) (*client.Client, error)
	// SessionID overrides the input's session_id (for a session bound
	// with --session in the MCP server's configuration).
	SessionID string
	// Server is the MCP server's name in the host's configuration: the
	// model knows the tools as mcp__<Server>__TaskList and so on.
	Server string
	// ToolPrefix is what the host puts before a tool's name (""
	// : "mcp__<Server>__").
	ToolPrefix string
	// MaxChars bounds the context added (0: tools.MaxHookChars), as
	// Measure counts it (nil: characters).
	MaxChars int
	Measure  func(string) int
	// History reads the host's own record of the conversation: a list
	// the daemon does not know is rebuilt from it, and a list already in
	// the context is not added again (nil: the host keeps none).
	History History
	// Bind records the conversation for the MCP bridge of the same host
	// process (nil: not recorded).
	Bind func(binding.Conversation) error
	// Warn hears what went wrong without stopping the run (nil: nothing
	// is said): a binding that could not be written must not cost the
	// model its list after a compaction.
	Warn func(error)
}

// BindTo returns a Config.Bind that records ids for the process pid of
// the host called host in dir (the daemon's runtime directory), where the
// host's bridge reads them.
func BindTo(dir, host string, pid int) func(binding.Conversation) error {
	k := binding.KeyOf(host, pid)
	return func(c binding.Conversation) error { return binding.Write(dir, k, c) }
}

// Run does what the hook does for in and returns the output to print.
// An error wrapping ErrNothing is not a failure: there is nothing the
// model needs to be told.
func Run(ctx context.Context, cfg Config, in Input) (Output, error) {
	if in.HookEventName != "SessionStart" {
		return Output{}, fmt.Errorf("%w: the hook acts on SessionStart, not %q", ErrNothing, in.HookEventName)
	}
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = tools.MaxHookChars
	}
	if cfg.Measure == nil {
		cfg.Measure = tools.Length
	}
	if cfg.Server == "" {
		cfg.Server = "tasks"
	}
	id := cfg.SessionID
	if id == "" {
		id = in.SessionID
		if id == "" {
			return Output{}, errors.New("no session: the input has no session_id and no --session was given")
		}
		// First, whatever else fails: from now on the bridge serves
		// this conversation's list. A failure is said, and the rest done.
		if cfg.Bind != nil {
			if err := cfg.Bind(binding.Conversation{ID: id, Transcript: in.TranscriptPath}); err != nil && cfg.Warn != nil {
				cfg.Warn(fmt.Errorf("recording conversation %s for the MCP bridge: %w (the bridge keeps the previous conversation's list)", id, err))
			}
		}
	}
	switch in.Source {
	case "compact", "resume", "fork", "startup":
	case "clear":
		if cfg.SessionID == "" {
			return Output{}, fmt.Errorf("%w: /clear starts conversation %s with an empty list", ErrNothing, id)
		}
	default:
		return Output{}, fmt.Errorf("%w: source %q carries no list", ErrNothing, in.Source)
	}
	c, err := cfg.Dial(ctx)
	if err != nil {
		return Output{}, err
	}
	defer c.Close()
	if cfg.ToolPrefix == "" {
		cfg.ToolPrefix = "mcp__" + cfg.Server + "__"
	}
	h := &run{cfg: cfg, c: c, names: tools.PrefixedNames(cfg.ToolPrefix)}
	s, err := c.Head(ctx, id)
	if errors.Is(err, client.ErrSessionNotFound) {
		// A conversation the daemon does not know: a fork (source "fork",
		// a new id over a copy of the history), or a list lost with its
		// database. The transcript holds the Task calls that made the list.
		s, err = h.replay(ctx, id, in.TranscriptPath)
		if errors.Is(err, ErrNothing) && in.TranscriptPath != "" && h.holds(ctx, in.TranscriptPath, markerHead) {
			// The conversation was shown a list (a hook's marker), but
			// the daemon has none and the history holds no Task calls
			// to rebuild it from (tasks made elsewhere, a rollout cut):
			// said plainly, once, rather than an empty list the history
			// contradicts.
			if h.seen(ctx, in.TranscriptPath, lostNote) {
				return Output{}, fmt.Errorf("%w: the conversation was told its list %s was lost", ErrNothing, id)
			}
			return output(fmt.Sprintf("%s (tasksessiond session %s): the daemon's database no longer has it, and this conversation's "+
				"history holds no Task calls to rebuild it from. %s shows an empty list and the next %s gets #1; "+
				"recreate the tasks that are still open from the conversation, if any.", lostNote, id, h.names.List, h.names.Create)), nil
		}
	}
	if err != nil {
		return Output{}, err
	}
	if s.Counts.Total == 0 {
		return Output{}, fmt.Errorf("%w: session %s has no tasks", ErrNothing, s.ID)
	}
	if in.Source == "compact" {
		return h.compacted(ctx, s.ID)
	}
	return h.current(ctx, s.ID, in.TranscriptPath)
}

type run struct {
	cfg   Config
	c     *client.Client
	names tools.ToolNames
}

// replay makes session id from the Task calls of the transcript at path.
func (h *run) replay(ctx context.Context, id, path string) (tasksessiond.Session, error) {
	none := fmt.Errorf("%w: session %s has no task list yet", ErrNothing, id)
	if path == "" {
		return tasksessiond.Session{}, none
	}
	if h.cfg.History == nil {
		return tasksessiond.Session{}, none
	}
	calls, err := h.cfg.History.Calls(ctx, path, h.cfg.Server)
	if err != nil {
		return tasksessiond.Session{}, fmt.Errorf("%w (%w)", none, err)
	}
	if len(calls) == 0 {
		return tasksessiond.Session{}, none
	}
	r, err := h.c.ReplaySession(ctx, id, calls)
	if errors.Is(err, client.ErrSessionExists) {
		// Made meanwhile, by the bridge's first call: that one stands.
		return h.c.Head(ctx, id)
	}
	if err != nil {
		return tasksessiond.Session{}, fmt.Errorf("rebuild session %s from its transcript: %w", id, err)
	}
	return r.Session, nil
}

// seen and holds ask the host's history, when it keeps one.
func (h *run) seen(ctx context.Context, path, text string) bool {
	return h.cfg.History != nil && h.cfg.History.Seen(ctx, path, text)
}

func (h *run) holds(ctx context.Context, path, text string) bool {
	return h.cfg.History != nil && h.cfg.History.Holds(ctx, path, text)
}

// compacted compacts head and returns what the successor starts with: the
// snapshot of its list, which is also what the TaskList fired for the
// model returned, said once.
func (h *run) compacted(ctx context.Context, head string) (Output, error) {
	out, err := h.c.Compact(ctx, wire.Compact{SessionID: head})
	if err != nil {
		return Output{}, fmt.Errorf("compact %s: %w", head, err)
	}
	text, err := h.carried(ctx, out.Session.ID)
	if err != nil {
		return Output{}, err
	}
	return output(text), nil
}

// carried is the list of successor, a compaction's, as the model is
// given it after the compaction.
func (h *run) carried(ctx context.Context, successor string) (string, error) {
	snap, err := h.c.Snapshot(ctx, successor)
	if err != nil {
		return "", fmt.Errorf("read the successor %s: %w", successor, err)
	}
	intro := fmt.Sprintf("Task list carried over from before the context was compacted: the same tasks with the same taskids "+
		"(%s was called for you after the compaction and returned this list). Keep it current with %s; the next %s gets #%d.",
		h.names.List, h.names.Update, h.names.Create, snap.NextTaskid)
	return h.compose(intro, snap.Tasks, successor), nil
}

// current returns head's list, unless the conversation's transcript shows
// it already holds this very list (a resume of a resume): a list enters
// the context once per change, not once per resume.
func (h *run) current(ctx context.Context, head, path string) (Output, error) {
	snap, err := h.c.Snapshot(ctx, head)
	if err != nil {
		return Output{}, fmt.Errorf("read the tasks of %s: %w", head, err)
	}
	intro := fmt.Sprintf("Your task list for this conversation, kept by tasksessiond. Keep it current with %s; the next %s gets #%d.",
		h.names.Update, h.names.Create, snap.NextTaskid)
	text := h.compose(intro, snap.Tasks, head)
	if path != "" && h.seen(ctx, path, marker(text)) {
		return Output{}, fmt.Errorf("%w: the conversation already holds this list of %s", ErrNothing, head)
	}
	return output(text), nil
}

// compose is intro, the list fitted to what is left of the budget, and a
// last line naming the session and the list's version (the marker that
// current looks for).
func (h *run) compose(intro string, tasks []tasksessiond.Task, session string) string {
	st := make([]tasksessiond.Task, len(tasks))
	for i, t := range tasks {
		st[i] = tasksessiond.Task{Taskid: t.Taskid, Status: tasksessiond.Status(t.Status), Subject: t.Subject, Description: t.Description}
	}
	// The marker hashes the tasks, not the fitted rendering, so a change
	// that the shortening hides still counts as a change.
	tail := "\n\n" + markerHead + session + ", list " + version(st) + ")"
	budget := h.cfg.MaxChars - h.cfg.Measure(intro) - h.cfg.Measure(tail) - 2
	if budget < minListChars {
		// Not even the counts fit beside the intro: the bare list, cut
		// to the limit, says more than an intro without one. The marker
		// stays when it leaves the list room, so that a resume finds the
		// list already said.
		if room := h.cfg.MaxChars - h.cfg.Measure(tail); room >= minListChars/2 {
			return tools.RenderWithinBy(st, room, h.names, h.cfg.Measure) + tail
		}
		return tools.RenderWithinBy(st, max(h.cfg.MaxChars, 0), h.names, h.cfg.Measure)
	}
	return intro + "\n\n" + tools.RenderWithinBy(st, budget, h.names, h.cfg.Measure) + tail
}

// markerHead begins the marker of every list a hook adds; lostNote begins
// what it says when that list is lost.
const (
	markerHead = "(tasksessiond session "
	lostNote   = "The task list of this conversation was lost"
)

// minListChars is the least room worth giving the list beside the intro.
const minListChars = 200

// version identifies a list's contents: equal lists, equal versions.
func version(tasks []tasksessiond.Task) string {
	f := fnv.New64a()
	for _, t := range tasks {
		fmt.Fprintf(f, "%d\x00%s\x00%s\x00%s\x00", t.Taskid, t.Status, t.Subject, t.Description)
	}
	return strconv.FormatUint(f.Sum64(), 16)
}

// Compose is the text a hook adds for the model, as the SessionStart hook
// composes it: intro, tasks fitted to cfg's budget, and a last line
// naming session and the list's version (Marker).
func Compose(cfg Config, intro string, tasks []tasksessiond.Task, session string) string {
	h := &run{cfg: cfg, names: tools.PrefixedNames(cfg.ToolPrefix)}
	return h.compose(intro, tasks, session)
}

// Marker is the part of a composed text that identifies the list: a
// history that holds it holds this very list.
func Marker(text string) string { return marker(text) }

// marker is the part of a composed text that identifies the list.
func marker(text string) string {
	i := strings.LastIndex(text, ", list ")
	if i < 0 {
		return text
	}
	return text[i:]
}
