// Package autostart dials the daemon and, when none answers, starts one:
// "tasksessiond serve", detached, on the same socket and database. A host
// that starts before the daemon (a fresh login, a crashed daemon) then
// still has its task list. When several start at once, the daemon's lock
// on its database lets exactly one of them serve; the others exit and
// every caller connects to the one that won.
package autostart

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/paths"
)

// Env turns autostart off when set to 0, false, no or off.
const Env = "TASKSESSIOND_AUTOSTART"

// DefaultWait is how long Dial waits for a daemon it started to answer.
const DefaultWait = 10 * time.Second

// Config says how to reach the daemon and how to start one.
type Config struct {
	Socket string
	// DB is the database the started daemon serves ("" leaves it to the
	// daemon's own default, TASKSESSIOND_DB or the XDG path).
	DB string
	// Exe is the tasksessiond binary to start; "" turns autostart off.
	Exe string
	// Log receives the started daemon's log ("" puts it beside the
	// socket, as tasksessiond.log).
	Log  string
	Wait time.Duration // 0 means DefaultWait
}

// Enabled reports whether the environment allows autostart.
func Enabled() bool {
	switch strings.ToLower(strings.TrimSpace(os.Getenv(Env))) {
	case "0", "false", "no", "off":
		return false
	}
	return true
}

// Dial connects to the daemon at cfg.Socket, starting it first when
// nothing listens there and cfg.Exe is set.
func Dial(ctx context.Context, cfg Config) (*client.Client, error) {
	c, err := client.Dial(ctx, cfg.Socket)
	if err == nil || cfg.Exe == "" || !Absent(err) {
		return c, err
	}
	exited, logPath, serr := start(cfg)
	if serr != nil {
		return nil, fmt.Errorf("%w; starting it failed: %w", err, serr)
	}
	wait := cfg.Wait
	if wait <= 0 {
		wait = DefaultWait
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	delay := 10 * time.Millisecond
	for {
		c, err := client.Dial(ctx, cfg.Socket)
		if err == nil || errors.Is(err, client.ErrUntrusted) {
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("started the daemon (%s serve), but it did not answer at %s within %v; its log is %s: %w",
				cfg.Exe, cfg.Socket, wait, logPath, err)
		case <-exited:
			// It lost the race for the database to another daemon, which
			// is coming up, or it failed: keep dialling either way; the
			// deadline tells the second case.
			exited = nil
		case <-time.After(delay):
		}
		delay = min(2*delay, 200*time.Millisecond)
	}
}

// Absent reports whether err says that no daemon listens on the socket
// (as opposed to one that answered, or refused us).
func Absent(err error) bool {
	return errors.Is(err, syscall.ENOENT) || errors.Is(err, syscall.ECONNREFUSED)
}

// start runs "Exe serve" in a session of its own, so that it outlives the
// host that started it and is not sent the host's signals.
func start(cfg Config) (exited <-chan struct{}, logPath string, err error) {
	logPath = cfg.Log
	if logPath == "" {
		logPath = filepath.Join(filepath.Dir(cfg.Socket), "tasksessiond.log")
	}
	if err := os.MkdirAll(filepath.Dir(logPath), 0o700); err != nil {
		return nil, logPath, fmt.Errorf("create the log's directory: %w", err)
	}
	if cfg.Log == "" {
		// Beside the socket: the directory the daemon itself will insist
		// is private; refuse a shared one before writing into it.
		if err := paths.Private(filepath.Dir(logPath)); err != nil {
			return nil, logPath, err
		}
	}
	logf, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND|noFollow, 0o600)
	if err != nil {
		return nil, logPath, fmt.Errorf("open the daemon's log: %w", err)
	}
	defer logf.Close()
	args := []string{"serve", "--socket", cfg.Socket}
	if cfg.DB != "" {
		args = append(args, "--db", cfg.DB)
	}
	cmd := exec.Command(cfg.Exe, args...)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = detached()
	if err := cmd.Start(); err != nil {
		return nil, logPath, fmt.Errorf("run %s: %w", cfg.Exe, err)
	}
	done := make(chan struct{})
	go func() {
		cmd.Wait() // reaps it; its exit code is in its log
		close(done)
	}()
	return done, logPath, nil
}
