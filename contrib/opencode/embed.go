// Package opencode holds the OpenCode plugin (tasksessiond.ts), built into
// tasksessiond for "tasksessiond setup opencode" to install.
package opencode

import _ "embed" // the plugin's source

// Plugin is tasksessiond.ts.
//
//go:embed tasksessiond.ts
var Plugin []byte
