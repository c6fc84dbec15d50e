package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// Server is the MCP server's name setup gives it: Codex offers its tools
// to the model as mcp__tasks__TaskCreate and so on.
const Server = "tasks"

// block names setup's block in config.toml.
const block = "tasksessiond"

// home is $CODEX_HOME, else ~/.codex.
func home(o host.Options) string {
	if d := o.Env("CODEX_HOME"); d != "" {
		return d
	}
	return filepath.Join(o.Home(), ".codex")
}

// Found reports whether Codex CLI is on PATH or has its home.
func (Host) Found(o host.Options) bool {
	if _, err := exec.LookPath("codex"); err == nil {
		return true
	}
	_, err := os.Stat(home(o))
	return err == nil
}

// Plan sets up the MCP server "tasks" (its tools approved: no prompt per
// call) and the SessionStart hook's trust in a block of config.toml of
// its own (Codex's TOML is the user's, comments and all: the rest of the
// file is not touched), and the hook in hooks.json (strict JSON, as Codex
// reads it).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	if o.Project != "" {
		// Codex 0.169 has project layers (.codex/ in a trusted project),
		// but where it keeps a project hook's trust is not pinned down
		// by a test here yet.
		return nil, errors.New("codex: setup writes Codex CLI's user configuration ($CODEX_HOME) only: run it without --project")
	}
	p := host.NewPlan(h, o)
	dir := home(o)
	hooksPath := filepath.Join(dir, "hooks.json")
	tomlPath := filepath.Join(dir, "config.toml")
	name := h.Name()
	command := host.Command(append([]string{o.Bin}, o.HookArgs(name)...)...)
	group := host.HookGroup(command, "")
	index := -1
	if _, err := host.EditJSON(p, hooksPath, config.JSON, func(d *config.Doc) error {
		if o.Uninstall || o.NoHook {
			host.RemoveHooks(p, d, hooksPath, "SessionStart", o.Bin, name)
			return nil
		}
		if err := host.SetHook(p, d, hooksPath, "SessionStart", o.Bin, name, group); err != nil {
			return err
		}
		index = host.HookIndex(d, "SessionStart", group)
		return nil
	}); err != nil {
		return nil, err
	}
	old, err := config.Read(tomlPath)
	if err != nil {
		return nil, host.Refuse(tomlPath, err)
	}
	if old != nil {
		if err := config.CheckTOML(old); err != nil {
			return nil, host.Refuse(tomlPath, err)
		}
	}
	var newb []byte
	if o.Uninstall {
		if newb, err = config.RemoveBlock(old, block); err != nil {
			return nil, host.Refuse(tomlPath, err)
		}
		if len(newb) == 0 && len(old) > 0 {
			newb = nil // setup made the file
		}
		if config.Block(old, block) != "" {
			p.Step("remove setup's block (the MCP server %q, the hook's trust) from %s", Server, tomlPath)
		}
	} else {
		body := h.table(o, hooksPath, index, command)
		if newb, err = config.SetBlock(old, block, body); err != nil {
			return nil, host.Refuse(tomlPath, err)
		}
		if string(newb) == string(old) {
			newb = old
		} else if was := config.Block(old, block); was == "" {
			p.Step("add the MCP server %q (%s) and the hook's trust to %s", Server, host.Command(append([]string{o.Bin}, o.MCPArgs()...)...), tomlPath)
		} else {
			p.Step("replace setup's block in %s (it was:\n%s)", tomlPath, strings.TrimRight(was, "\r\n"))
		}
		p.Note("Codex CLI's own update_plan cannot be turned off in its configuration: the model has it beside ours")
	}
	p.Add(config.Change{Path: tomlPath, Old: old, New: newb, Mode: 0o600, Check: config.CheckTOML})
	return p, nil
}

// table is setup's block: the server, and the trust of the hook at index
// of SessionStart's groups in hooksPath (-1: none).
func (h Host) table(o host.Options, hooksPath string, index int, command string) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	line("[mcp_servers.%s]", Server)
	line("command = %s", tq(o.Bin))
	line("args = [%s]", tqList(o.MCPArgs()))
	line(`default_tools_approval_mode = "approve"`)
	line("startup_timeout_sec = 30")
	if env := o.MCPEnv(); env != nil {
		line("[mcp_servers.%s.env]", Server)
		for _, k := range []string{"TASKSESSIOND_SOCKET", "TASKSESSIOND_DB"} {
			if v, ok := env[k]; ok {
				line("%s = %s", k, tq(v.(string)))
			}
		}
	}
	if index >= 0 {
		line("[hooks.state.%s]", tq(fmt.Sprintf("%s:session_start:%d:0", hooksPath, index)))
		line("enabled = true")
		line("trusted_hash = %s", tq(HookTrustHash("session_start", "", command, 600)))
	}
	return b.String()
}

// Check finds servers that run tasksessiond mcp under another name.
func (h Host) Check(o host.Options) []host.Finding {
	path := filepath.Join(home(o), "config.toml")
	b, err := config.Read(path)
	if err != nil || b == nil {
		return nil
	}
	var cfg struct {
		Servers map[string]struct {
			Command string   `toml:"command"`
			Args    []string `toml:"args"`
		} `toml:"mcp_servers"`
	}
	if err := config.DecodeTOML(b, &cfg); err != nil {
		return []host.Finding{{Problem: host.Refuse(path, err).Error(), Fix: "repair the file, then: tasksessiond setup " + h.Name()}}
	}
	var out []host.Finding
	for n, s := range cfg.Servers {
		if n != Server && host.RunsTasksessiond(append([]string{s.Command}, s.Args...), o.Bin, "mcp") {
			out = append(out, host.Finding{
				Problem: "the MCP server " + n + " in " + path + " also runs tasksessiond mcp: the model gets the tools twice",
				Fix:     "codex mcp remove " + n,
			})
		}
	}
	return out
}

// tq quotes s as a TOML basic string.
func tq(s string) string {
	b, _ := json.Marshal(s) // JSON string escapes are valid TOML basic-string escapes
	return string(b)
}

func tqList(ss []string) string {
	q := make([]string, len(ss))
	for i, s := range ss {
		q[i] = tq(s)
	}
	return strings.Join(q, ", ")
}
