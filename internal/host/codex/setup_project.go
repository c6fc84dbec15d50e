package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// A project's configuration, as Codex CLI reads it (openai/codex:
// codex-rs/config/src/loader/mod.rs, load_project_layers and
// disabled_reason_for_decision; codex-rs/hooks/src/engine/discovery.rs,
// discover_handlers; codex-rs/hooks/src/config_rules.rs,
// hook_states_from_stack), each point held for the pinned 0.169.0 by
// e2e/codex (TestSetupProject, TestSetupProjectTrust):
//
//   - DIR/.codex/config.toml and DIR/.codex/hooks.json are a project layer,
//     for each DIR from the project's root (by default the nearest
//     directory at or above the working directory with a .git) down to
//     the working directory; a .codex that is $CODEX_HOME is skipped;
//   - a project layer is loaded only when the project is trusted in the
//     user's config.toml ([projects."DIR"] trust_level = "trusted", for
//     DIR, the project's root or its git repository's root); otherwise it
//     is kept disabled, its server and hooks with it;
//   - its mcp_servers are honoured (they are not among the keys a project
//     layer may not set: model providers, notify, profiles, otel, …);
//   - a hook runs only once trusted, and its trust ([hooks.state."<path of
//     hooks.json>:session_start:N:0"] trusted_hash) is read from the
//     user's layers only: a project layer cannot trust its own hooks.
//
// So setup puts the server in the project's .codex/config.toml and the
// hook in its .codex/hooks.json, and records the hook's trust in the
// user's config.toml, in a block of its own named after the project. It
// does not trust the project: that is the user's decision in Codex (it
// covers everything in the project's .codex/, not only what setup wrote),
// and setup says when it is missing.

// projectBlock names setup's block in the user's config.toml that holds
// the trust of the hook in the project dir.
func projectBlock(dir string) string { return block + " project " + dir }

// projectDir is the project's directory as Codex names it: absolute, with
// symbolic links resolved (Codex's working directory is the real path,
// and hooks.json's path in the hook's trust is under it).
func projectDir(project string) (string, error) {
	dir, err := filepath.Abs(project)
	if err != nil {
		return "", err
	}
	if real, err := filepath.EvalSymlinks(dir); err == nil {
		dir = real
	}
	if strings.ContainsAny(dir, "\r\n") {
		return "", fmt.Errorf("codex: the project's path %q holds a line break: setup cannot name it in config.toml", dir)
	}
	return dir, nil
}

// planProject sets up the project o.Project: the MCP server in a block of
// .codex/config.toml, the SessionStart hook in .codex/hooks.json, and the
// hook's trust in the user's config.toml.
func (h Host) planProject(o host.Options) (*host.Plan, error) {
	dir, err := projectDir(o.Project)
	if err != nil {
		return nil, err
	}
	dotCodex := filepath.Join(dir, ".codex")
	userDir := home(o)
	if same(dotCodex, userDir) {
		return nil, fmt.Errorf("codex: %s is $CODEX_HOME, which Codex reads as your user configuration, not a project's: run setup without --project", dotCodex)
	}
	p := host.NewPlan(h, o)
	hooksPath := filepath.Join(dotCodex, "hooks.json")
	projectTOML := filepath.Join(dotCodex, "config.toml")
	userTOML := filepath.Join(userDir, "config.toml")
	command := h.hookCommand(o)
	index, err := h.setHook(p, o, hooksPath, command)
	if err != nil {
		return nil, err
	}
	server := ""
	if !o.Uninstall {
		server = h.serverTable(o)
	}
	if err := editBlock(p, projectTOML, block, server,
		fmt.Sprintf("the MCP server %q (%s)", Server, host.Command(append([]string{o.Bin}, o.MCPArgs()...)...)),
		fmt.Sprintf("the MCP server %q", Server)); err != nil {
		return nil, err
	}
	trust := ""
	if !o.Uninstall {
		trust = trustTable(hooksPath, index, command)
	}
	if err := editBlock(p, userTOML, projectBlock(dir), trust,
		fmt.Sprintf("the trust of %s's hook (Codex reads a hook's trust from your config.toml only)", dir),
		fmt.Sprintf("the trust of %s's hook", dir)); err != nil {
		return nil, err
	}
	if o.Uninstall {
		return p, nil
	}
	if note := trustNote(userTOML, dir); note != "" {
		p.Note("%s", note)
	}
	if !o.NoHook && userHook(o, h.Name()) {
		p.Note("the SessionStart hook is in %s too: in this project Codex runs it twice, and the list comes twice into the conversation; keep one of the two (--no-hook here, or there)", filepath.Join(userDir, "hooks.json"))
	}
	p.Note("Codex CLI's own update_plan cannot be turned off in its configuration: the model has it beside ours")
	return p, nil
}

// same reports whether two paths name one directory.
func same(a, b string) bool {
	if a == b {
		return true
	}
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	return errA == nil && errB == nil && os.SameFile(sa, sb)
}

// trustLevel is the project's trust in the user's config.toml at path:
// the level ("trusted", "untrusted", "" for none) and the project key it
// was found under (dir, else the nearest directory above it with a .git,
// the project's root as Codex finds it by default).
func trustLevel(path, dir string) (level, key string) {
	b, err := config.Read(path)
	if err != nil || b == nil {
		return "", dir
	}
	var cfg struct {
		Projects map[string]struct {
			TrustLevel string `toml:"trust_level"`
		} `toml:"projects"`
	}
	if config.DecodeTOML(b, &cfg) != nil {
		return "", dir
	}
	keys := []string{dir}
	for d := dir; ; {
		if _, err := os.Stat(filepath.Join(d, ".git")); err == nil {
			if d != dir {
				keys = append(keys, d)
			}
			break
		}
		up := filepath.Dir(d)
		if up == d {
			break
		}
		d = up
	}
	for _, k := range keys {
		if pr, ok := cfg.Projects[k]; ok && pr.TrustLevel != "" {
			return pr.TrustLevel, k
		}
	}
	return "", dir
}

// trustNote says what the project's trust means for what setup wrote.
func trustNote(userTOML, dir string) string {
	level, key := trustLevel(userTOML, dir)
	dotCodex := filepath.Join(dir, ".codex")
	switch level {
	case "trusted":
		return fmt.Sprintf("Codex loads %s only in a trusted project: %s is trusted in %s", dotCodex, key, userTOML)
	case "untrusted":
		return fmt.Sprintf("Codex loads nothing of %s (neither the server nor the hook) while %s is marked untrusted in %s; setup leaves that as it is: trust the project in Codex, or set trust_level = \"trusted\" under [projects.%s] there", dotCodex, key, userTOML, tq(key))
	default:
		return fmt.Sprintf("Codex loads nothing of %s (neither the server nor the hook) until you trust the project: start Codex in %s and trust the folder when it asks, or add to %s:\n[projects.%s]\ntrust_level = \"trusted\"\nSetup does not: that trust covers all of %s, not only what setup wrote", dotCodex, dir, userTOML, tq(dir), dotCodex)
	}
}

// userHook reports whether the user's hooks.json runs the hook.
func userHook(o host.Options, name string) bool {
	path := filepath.Join(home(o), "hooks.json")
	b, err := config.Read(path)
	if err != nil || b == nil {
		return false
	}
	d, err := config.ParseJSON(b, config.JSON)
	if err != nil {
		return false
	}
	var groups []struct {
		Hooks []struct {
			Command string `json:"command"`
		} `json:"hooks"`
	}
	d.Get([]string{"hooks", "SessionStart"}, &groups)
	for _, g := range groups {
		for _, hk := range g.Hooks {
			if host.RunsTasksessiond(host.Words(hk.Command), o.Bin, "hook", name) {
				return true
			}
		}
	}
	return false
}
