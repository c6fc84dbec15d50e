package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"

	"github.com/tasksessiond/tasksessiond/client"
	"github.com/tasksessiond/tasksessiond/internal/autostart"
	"github.com/tasksessiond/tasksessiond/internal/hook"
)

// geminiHook is "tasksessiond hook gemini". It always prints a JSON object
// ({} when it has nothing to add): Gemini CLI takes a hook's stderr, when
// its stdout is empty, for its output, and would show a warning as a
// message.
func geminiHook(ctx context.Context, cfg hook.Config, start autostart.Config, runtimeDir string, verbose bool, stdin io.Reader, stdout, stderr io.Writer) int {
	var out any = struct{}{}
	defer func() {
		if r := recover(); r != nil {
			fmt.Fprintf(stderr, "tasksessiond hook: internal error: %v (nothing was added to the session)\n", r)
			out = struct{}{}
		}
		if err := json.NewEncoder(stdout).Encode(out); err != nil {
			fmt.Fprintf(stderr, "tasksessiond hook: write output: %v\n", err)
		}
	}()
	in, err := hook.ReadGeminiInput(stdin)
	if err != nil {
		fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		return 0
	}
	cfg.Dial = func(ctx context.Context) (*client.Client, error) { return autostart.Dial(ctx, start) }
	cfg.Warn = func(err error) { fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err) }
	if pid := hook.GeminiHostPID(); pid > 0 && in.HookEventName == "SessionStart" {
		cfg.Bind = hook.BindGemini(runtimeDir, pid)
	}
	res, err := hook.RunGemini(ctx, cfg, in)
	switch {
	case errors.Is(err, hook.ErrNothing):
		if verbose {
			fmt.Fprintf(stderr, "tasksessiond hook: %v\n", err)
		}
	case err != nil:
		fmt.Fprintf(stderr, "tasksessiond hook: %v (nothing was added to the session)\n", err)
	case res != nil:
		out = res
	}
	return 0
}
