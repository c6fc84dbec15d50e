package opencode

import (
	"os"
	"path/filepath"

	plugin "github.com/tasksessiond/tasksessiond/contrib/opencode"
	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// ownTools are OpenCode's own to-do tools, off so the model sees one list
// (todoread is for releases before 1.18.33, which lack it).
var ownTools = []string{"todowrite", "todoread"}

// configDir is where OpenCode reads the user's config and plugins:
// $OPENCODE_CONFIG_DIR, else $XDG_CONFIG_HOME/opencode, else
// ~/.config/opencode.
func configDir(o host.Options) string {
	if d := o.Dir("OPENCODE_CONFIG_DIR"); d != "" {
		return d
	}
	if x := o.Dir("XDG_CONFIG_HOME"); x != "" {
		return filepath.Join(x, "opencode")
	}
	return filepath.Join(o.Home(), ".config", "opencode")
}

// files are the config file setup edits (opencode.jsonc when there is
// one: OpenCode reads it last, so its "tools" win; else opencode.json) and
// the plugin's path.
func files(o host.Options) (cfg, pluginPath string) {
	plugins := filepath.Join(configDir(o), "plugin")
	if o.Project != "" {
		plugins = filepath.Join(o.Project, ".opencode", "plugin")
	}
	all := configFiles(o)
	cfg = all[0]
	if _, err := os.Stat(all[1]); err == nil {
		cfg = all[1]
	}
	return cfg, filepath.Join(plugins, "tasksessiond.ts")
}

// configFiles are opencode.json and opencode.jsonc where setup edits them.
func configFiles(o host.Options) []string {
	dir := configDir(o)
	if o.Project != "" {
		dir = o.Project
	}
	return []string{filepath.Join(dir, "opencode.json"), filepath.Join(dir, "opencode.jsonc")}
}

// Plan installs the plugin (OpenCode tells MCP servers nothing about the
// session; a plugin's tools get the session id with each call) and turns
// OpenCode's own to-do tools off in its config (JSONC, as OpenCode reads
// it; setting them off from the plugin does not remove them in 1.18.33).
func (h Host) Plan(o host.Options) (*host.Plan, error) {
	cfg, pluginPath := files(o)
	user := o
	user.Project = ""
	if err := host.NotUsers(o, configFiles(o)[0], configFiles(user)[0]); err != nil {
		return nil, err
	}
	cfgs := []string{cfg}
	if o.Uninstall { // both files setup may have edited: the user may have moved to opencode.jsonc since
		cfgs = configFiles(o)
	}
	var es []host.Entry
	for _, cfg := range cfgs {
		for _, t := range ownTools {
			es = append(es, host.Entry{File: cfg, Dialect: config.JSONC, Kind: host.UserValue, Path: []string{"tools", t}, Value: false})
		}
	}
	p, err := host.Declared(h, o, append(es, host.Entry{File: pluginPath, Kind: host.OwnFile, Value: plugin.Plugin}))
	if err != nil {
		return nil, err
	}
	if !o.Uninstall {
		p.Note("OpenCode's own todowrite is off (\"tools\" in %s), so the model sees one list: ours", cfg)
		if o.Bin != "tasksessiond" {
			p.Note("the plugin starts %s only if it is on PATH as tasksessiond, or named in TASKSESSIOND_BIN where OpenCode runs", o.Bin)
		}
		if o.Socket != "" || o.DB != "" || o.Session != "" {
			p.Note("the plugin reads TASKSESSIOND_SOCKET, TASKSESSIOND_DB and TASKSESSIOND_SESSION from the environment OpenCode runs in: set them there")
		}
	}
	return p, nil
}

// Check finds an MCP server that runs tasksessiond mcp beside the plugin.
func (h Host) Check(o host.Options) []host.Finding {
	cfg, _ := files(o)
	return host.OtherServers(h, o, cfg, config.JSONC, []string{"mcp"}, "",
		"runs tasksessiond mcp beside the plugin: the model gets the tools twice",
		func(n string) string { return "remove mcp." + n + " from " + cfg })
}
