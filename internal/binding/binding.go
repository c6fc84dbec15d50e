// Package binding records which conversation a host process is in now.
//
// Claude Code keeps one MCP server process for its whole life, but the
// conversation changes under it: /clear starts a new one, and so does a
// fork. Its SessionStart hook sees each new conversation id; the bridge
// does not. So the hook writes the id here, keyed by the host's process,
// and the bridge reads it before each call. A small file in the daemon's
// private runtime directory does this with no daemon involved, so it works
// even while the daemon is down, and vanishes with the runtime directory.
package binding

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// Key names one host process: the host's name and its pid, plus the
// process's start time where the system tells it, so that a pid reused by
// a later process does not inherit the binding.
type Key struct {
	Host  string
	PID   int
	Start string
}

// KeyOf returns the key of host's process pid.
func KeyOf(host string, pid int) Key {
	return Key{Host: host, PID: pid, Start: startTime(pid)}
}

func (k Key) file(dir string) string {
	return filepath.Join(dir, "bind", k.Host+"-"+strconv.Itoa(k.PID))
}

// Conversation is what a binding records: the conversation's id and its
// transcript (where the host keeps its history; "" if unknown).
type Conversation struct {
	ID         string
	Transcript string
}

// Write records that k's process is now in conversation c.
func Write(dir string, k Key, c Conversation) error {
	if k.PID <= 0 || c.ID == "" || strings.ContainsAny(c.ID+c.Transcript, "\n\x00") {
		return fmt.Errorf("binding %s-%d to %q: invalid", k.Host, k.PID, c.ID)
	}
	path := k.file(dir)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("binding: %w", err)
	}
	// A binding redirects a bridge's writes: only a directory no one else
	// can write to is trusted with it.
	for _, d := range []string{dir, filepath.Dir(path)} {
		if err := paths.Private(d); err != nil {
			return fmt.Errorf("binding: %w", err)
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".bind-*")
	if err != nil {
		return fmt.Errorf("binding: %w", err)
	}
	_, werr := tmp.WriteString(k.Start + "\n" + c.ID + "\n" + c.Transcript + "\n")
	cerr := tmp.Close()
	if err := errors.Join(werr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("binding: write %s: %w", tmp.Name(), err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("binding: %w", err)
	}
	return nil
}

// Read returns the conversation k's process is in; its ID is "" when
// nothing (or only a binding of an earlier process with the same pid) is
// recorded, or the directory is not private.
func Read(dir string, k Key) Conversation {
	if paths.Private(filepath.Dir(k.file(dir))) != nil {
		return Conversation{}
	}
	f, err := os.Open(k.file(dir))
	if err != nil {
		return Conversation{}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, 64<<10)) // an id and a path
	if err != nil {
		return Conversation{}
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if len(lines) < 2 || lines[0] != k.Start {
		return Conversation{}
	}
	c := Conversation{ID: lines[1]}
	if len(lines) > 2 {
		c.Transcript = lines[2]
	}
	return c
}

// startTime reads a process's start time (in clock ticks since boot) from
// /proc; "" where there is no /proc.
func startTime(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The command name, in parentheses, may hold spaces: fields are
	// counted after its closing parenthesis. Start time is field 22.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return ""
	}
	return f[19]
}
