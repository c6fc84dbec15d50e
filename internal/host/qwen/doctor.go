package qwen

import (
	"cmp"

	"github.com/tasksessiond/tasksessiond/internal/host"
	"github.com/tasksessiond/tasksessiond/internal/host/gemini"
)

var _ host.Doctor = Host{}

// Diagnose reads Qwen Code (0.24.4), a Gemini CLI fork, as Gemini CLI's
// doctor does, in its own files (home: $QWEN_HOME, or the one a .env in
// the home names, else ~/.qwen;
// $QWEN_CODE_SYSTEM_SETTINGS_PATH, else /etc/qwen-code/settings.json) and
// where it differs (gemini.Dialect's Qwen).
func (Host) Diagnose(o host.Options) host.Diagnosis {
	return gemini.Dialect{Title: "Qwen Code", Name: name, Dir: home(o),
		System:   cmp.Or(o.Env("QWEN_CODE_SYSTEM_SETTINGS_PATH"), "/etc/qwen-code/settings.json"),
		Defaults: o.Env("QWEN_CODE_SYSTEM_DEFAULTS_PATH"), Trusted: o.Env("QWEN_CODE_TRUSTED_FOLDERS_PATH"), Qwen: true}.Diagnose(o)
}
