package harness

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// A host's hook and MCP server run through a small shell wrapper named
// tasksessiond (Recorder.Bin), which "tasksessiond setup --bin" writes
// into the host's configuration: for "hook" it records the host's input,
// its environment, the transcript as it was (when the input names one),
// what the hook printed and its stderr; for "mcp" the server's pid, its
// parent and its environment, and the servers' stderr; then it runs
// tasksessiond with the same arguments. The "mcp" branch uses shell
// builtins only (no process of its own before it execs the bridge): a
// host's first request may go out before a slow bridge connects.

// Recording says what tells the host's runs apart in a failing test's log.
type Recording struct {
	// Vars name environment variables the host sets for its hooks and
	// MCP servers: recorded at each MCP server start (MCPStart.Getenv)
	// and shown in Dump.
	Vars []string
}

// Recorder writes the wrapper and reads what it recorded.
type Recorder struct {
	Bin string // the wrapper: the tasksessiond command setup configures (--bin)

	hookDir, mcpLog, mcpEnv, mcpErr string
	vars                            []string
}

// Record writes the Host's wrapper into Root/bin, sets h.Rec, and adds its
// quiet check (the bridge and the hooks must not write to stderr unless
// something is wrong).
func (h *Host) Record(r Recording) *Recorder {
	rec := &Recorder{
		Bin:     filepath.Join(h.Root, "bin", "tasksessiond"),
		hookDir: filepath.Join(h.Root, "hooks"),
		mcpLog:  filepath.Join(h.Root, "mcp.log"),
		mcpEnv:  filepath.Join(h.Root, "mcp.env"),
		mcpErr:  filepath.Join(h.Root, "mcp.stderr"),
		vars:    r.Vars,
	}
	h.Mkdir(rec.hookDir)
	q := ShellQuote
	// A line per MCP server start in mcp.log: pid=P ppid=Q VAR=value ...
	format, vars := "pid=%s ppid=%s", `"$$" "$PPID"`
	for _, v := range r.Vars {
		format += " " + v + "=%s"
		vars += ` "$` + v + `"`
	}
	// A hook run's .env is written last (through a rename): a run is read
	// only once the hook has finished.
	h.WriteFile(rec.Bin, `#!/bin/sh
# Records a hook run or an MCP server start for the test, then runs tasksessiond.
case "$1" in
mcp)
  export -p >`+q(rec.mcpEnv)+`.$$
  printf '`+format+`\n' `+vars+` >>`+q(rec.mcpLog)+`
  exec `+q(h.TSD)+` "$@" 2>>`+q(rec.mcpErr)+`
  ;;
hook)
  d=`+q(rec.hookDir)+`/$(date +%s%N)-$$
  cat >"$d.in"
  tp=$(sed -n 's/.*"transcript_path" *: *"\([^"]*\)".*/\1/p' "$d.in")
  if [ -n "$tp" ] && [ -f "$tp" ]; then cp "$tp" "$d.transcript"; fi
  `+q(h.TSD)+` "$@" <"$d.in" >"$d.out" 2>"$d.err"
  { printf 'PPID=%s\n' "$PPID"; env; } >"$d.env.tmp" && mv "$d.env.tmp" "$d.env"
  cat "$d.out"
  ;;
*)
  exec `+q(h.TSD)+` "$@"
  ;;
esac
`, 0o700)
	h.Rec = rec
	h.Quiet(rec.CheckQuiet)
	return rec
}

// HookRun is one run of a host's hook, as the host made it.
type HookRun struct {
	Event          string // the input's hook_event_name
	Source         string // the input's source (SessionStart: startup, resume, clear, compact, ...)
	SessionID      string // the input's session_id
	TranscriptPath string // the input's transcript_path
	PPID           int    // the wrapper's parent
	Input          string // the JSON the host wrote to the hook
	Output         string // what the hook printed
	Context        string // the output's hookSpecificOutput.additionalContext
	Stderr         string
	Env            string // the hook's environment (env's output)
	// Transcript is the input's transcript as it was when the hook ran
	// ("" if there was none yet).
	Transcript string
}

// Getenv returns a variable of the hook's environment.
func (r HookRun) Getenv(key string) string { return getenv(r.Env, key) }

// Hooks returns the hook's runs so far, in order.
func (rec *Recorder) Hooks() []HookRun {
	envs, _ := filepath.Glob(filepath.Join(rec.hookDir, "*.env"))
	sort.Strings(envs)
	var out []HookRun
	for _, env := range envs {
		base := strings.TrimSuffix(env, ".env")
		read := func(ext string) string { b, _ := os.ReadFile(base + ext); return string(b) }
		r := HookRun{Input: read(".in"), Output: read(".out"), Stderr: read(".err"), Env: read(".env"), Transcript: read(".transcript")}
		var in struct {
			Event          string `json:"hook_event_name"`
			SessionID      string `json:"session_id"`
			Source         string `json:"source"`
			TranscriptPath string `json:"transcript_path"`
		}
		json.Unmarshal([]byte(r.Input), &in)
		r.Event, r.Source, r.SessionID, r.TranscriptPath = in.Event, in.Source, in.SessionID, in.TranscriptPath
		var o struct {
			HookSpecificOutput struct {
				AdditionalContext string `json:"additionalContext"`
			} `json:"hookSpecificOutput"`
		}
		json.Unmarshal([]byte(r.Output), &o)
		r.Context = o.HookSpecificOutput.AdditionalContext
		r.PPID, _ = strconv.Atoi(r.Getenv("PPID"))
		out = append(out, r)
	}
	return out
}

// MCPStart is one start of the MCP server by a host.
type MCPStart struct {
	PID  int
	PPID int               // its parent: the host (the wrapper execs the bridge)
	Vars map[string]string // the Recording's Vars, as the server got them
	Env  string            // its environment ("export -p" lines)
}

// Getenv returns one of the Recording's Vars as the MCP server got it.
func (s MCPStart) Getenv(key string) string { return s.Vars[key] }

// MCPStarts returns the MCP servers the host started so far, in order.
func (rec *Recorder) MCPStarts() []MCPStart {
	b, _ := os.ReadFile(rec.mcpLog)
	var out []MCPStart
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		s := MCPStart{Vars: map[string]string{}}
		for _, kv := range f {
			k, v, _ := strings.Cut(kv, "=")
			switch k {
			case "pid":
				s.PID, _ = strconv.Atoi(v)
			case "ppid":
				s.PPID, _ = strconv.Atoi(v)
			default:
				s.Vars[k] = v
			}
		}
		env, _ := os.ReadFile(fmt.Sprintf("%s.%d", rec.mcpEnv, s.PID))
		s.Env = string(env)
		out = append(out, s)
	}
	return out
}

// MCPStderr is what the MCP servers wrote to stderr.
func (rec *Recorder) MCPStderr() string {
	b, _ := os.ReadFile(rec.mcpErr)
	return string(b)
}

// CheckQuiet fails the test if the bridge or the hook wrote to stderr
// (the MCP SDK's own log, which calls a host's goodbye an error, goes to
// stderr with --verbose only).
func (rec *Recorder) CheckQuiet(tb testing.TB) {
	if s := strings.TrimSpace(rec.MCPStderr()); s != "" {
		tb.Errorf("the MCP bridge wrote to stderr (it must be silent unless something is wrong):\n%s", s)
	}
	for _, r := range rec.Hooks() {
		if r.Stderr != "" {
			tb.Errorf("the hook (%s %s, session %s) wrote to stderr:\n%s", r.Event, r.Source, r.SessionID, r.Stderr)
		}
	}
}

// Dump describes the hook runs and MCP server starts, for a failing test's log.
func (rec *Recorder) Dump() string {
	var b strings.Builder
	vars := func(getenv func(string) string) string {
		var s string
		for _, v := range rec.vars {
			s += fmt.Sprintf(" %s=%s", v, getenv(v))
		}
		return s
	}
	for i, r := range rec.Hooks() {
		fmt.Fprintf(&b, "%d: event=%s source=%s session_id=%s transcript=%s ppid=%d%s output=%d bytes context=%d chars stderr=%q\n   input: %.2000s\n",
			i+1, r.Event, r.Source, r.SessionID, r.TranscriptPath, r.PPID, vars(r.Getenv), len(r.Output), len(r.Context), r.Stderr, r.Input)
	}
	b.WriteString("MCP servers:\n")
	for _, s := range rec.MCPStarts() {
		fmt.Fprintf(&b, "   pid=%d ppid=%d%s\n", s.PID, s.PPID, vars(s.Getenv))
	}
	fmt.Fprintf(&b, "MCP stderr: %q\n", rec.MCPStderr())
	return b.String()
}

// getenv returns key's value in env (env's output; the first line that
// sets it).
func getenv(env, key string) string {
	for _, line := range strings.Split(env, "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && k == key {
			return v
		}
	}
	return ""
}
