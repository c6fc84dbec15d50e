package hook

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/paths"
	"github.com/tasksessiond/tasksessiond/internal/tools"
	"github.com/tasksessiond/tasksessiond/wire"
)

// A host whose hooks hear of a compaction only before it (and none after)
// cannot hand the model its list at the moment the requirement asks. Its
// hook compacts the daemon session before the compaction (Compact) and
// owes the list to the conversation (Owe); the next of its hooks that can
// add context delivers it, once (Carried with the successor Owed returns).
// What is owed is a small file in the daemon's private runtime directory,
// like a binding, so it survives the host's process and the daemon's.

// Compact compacts the session of conversation id (cfg.SessionID, when
// set) and returns the successor; ErrNothing when it has no tasks.
func Compact(ctx context.Context, cfg Config, id string) (string, error) {
	if cfg.SessionID != "" {
		id = cfg.SessionID
	}
	c, err := cfg.Dial(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	s, err := c.Head(ctx, id)
	if errors.Is(err, client.ErrSessionNotFound) {
		return "", fmt.Errorf("%w: session %s has no task list", ErrNothing, id)
	}
	if err != nil {
		return "", err
	}
	if s.Counts.Total == 0 {
		return "", fmt.Errorf("%w: session %s has no tasks", ErrNothing, s.ID)
	}
	out, err := c.Compact(ctx, wire.Compact{SessionID: s.ID})
	if err != nil {
		return "", fmt.Errorf("compact %s: %w", s.ID, err)
	}
	return out.Session.ID, nil
}

// Carried is what the model is given after a compaction: the list of
// successor (Compact's), which is also the fired TaskList's result.
func Carried(ctx context.Context, cfg Config, successor string) (string, error) {
	if cfg.MaxChars <= 0 {
		cfg.MaxChars = tools.MaxHookChars
	}
	if cfg.Measure == nil {
		cfg.Measure = tools.Length
	}
	if cfg.Server == "" {
		cfg.Server = "tasks"
	}
	if cfg.ToolPrefix == "" {
		cfg.ToolPrefix = "mcp__" + cfg.Server + "__"
	}
	c, err := cfg.Dial(ctx)
	if err != nil {
		return "", err
	}
	defer c.Close()
	h := &run{cfg: cfg, c: c, names: tools.PrefixedNames(cfg.ToolPrefix)}
	return h.carried(ctx, successor)
}

// owedFile is where what conversation id of host is owed is kept.
func owedFile(dir, host, id string) (string, error) {
	if id == "" || len(id) > 256 || strings.ContainsAny(id, "/\\\x00\n") || id == "." || id == ".." {
		return "", fmt.Errorf("owed list of %s conversation %q: not an id", host, id)
	}
	return filepath.Join(dir, "owed", host+"-"+id), nil
}

// Owe records that conversation id of host is owed the list of session
// successor, in dir (the daemon's runtime directory).
func Owe(dir, host, id, successor string) error {
	path, err := owedFile(dir, host, id)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("owe a list: %w", err)
	}
	for _, d := range []string{dir, filepath.Dir(path)} {
		if err := paths.Private(d); err != nil {
			return fmt.Errorf("owe a list: %w", err)
		}
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(successor+"\n"), 0o600); err != nil {
		return fmt.Errorf("owe a list: %w", err)
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return fmt.Errorf("owe a list: %w", err)
	}
	return nil
}

// Owed returns the session whose list conversation id of host is owed,
// and forgets it: it is delivered once ("" when nothing is owed).
func Owed(dir, host, id string) string {
	path, err := owedFile(dir, host, id)
	if err != nil || paths.Private(filepath.Dir(path)) != nil {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	// Taken by whoever removes it: two hooks at once deliver it once.
	if os.Remove(path) != nil {
		return ""
	}
	return strings.TrimSpace(string(b))
}
