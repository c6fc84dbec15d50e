package qwen

import (
	"bufio"
	"bytes"
	"os"
	"path/filepath"
	"regexp"
	"strings"

	"github.com/tasksessiond/tasksessiond/internal/host"
)

// home is Qwen Code's own directory as 0.24.4 finds it
// (Storage.getGlobalQwenDir): QWEN_HOME (configured), else ~/.qwen. A
// "~" or "~/" (or "~\\") at its start is the user's home; a relative one
// is taken from the folder Qwen Code runs in, the one checked or set up
// (host.ProjectDir), not from where tasksessiond was started.
func home(o host.Options) string {
	d := configured(o)
	switch {
	case d == "":
		return filepath.Join(o.Home(), ".qwen")
	case tilde(d):
		return filepath.Join(append([]string{o.Home()}, separators.Split(d[1:], -1)...)...)
	case filepath.IsAbs(d):
		return filepath.Clean(d)
	}
	return filepath.Join(host.ProjectDir(o), d)
}

// configured is the QWEN_HOME Qwen Code 0.24.4 takes (cli-entry.js's
// preResolveQwenHome): the environment's, else the one ~/.qwen/.env or
// else ~/.env names; "" for none. Qwen Code reads the files only where
// the variable is not set at all: set and empty, it is ~/.qwen.
func configured(o host.Options) string {
	d, set := o.Env("QWEN_HOME"), false
	if o.Getenv == nil { // the process's environment tells unset from empty
		d, set = os.LookupEnv("QWEN_HOME")
	}
	for _, f := range []string{filepath.Join(o.Home(), ".qwen", ".env"), filepath.Join(o.Home(), ".env")} {
		if d != "" || set {
			break
		}
		d = envFileValue(f)
	}
	return d
}

// tilde reports whether Qwen Code takes QWEN_HOME d from the user's home.
func tilde(d string) bool {
	return d == "~" || strings.HasPrefix(d, "~/") || strings.HasPrefix(d, `~\`)
}

// separators split a QWEN_HOME after "~" as Qwen Code does.
var separators = regexp.MustCompile(`[/\\]+`)

// envFileValue is the QWEN_HOME the .env file f gives, as Qwen Code
// reads it (Node's util.parseEnv, after "QWEN_HOME: value" is made
// "QWEN_HOME=value"): the last line "[export] QWEN_HOME=value"; a value in
// quotes is what they hold, one without ends at "#"; "" when there is
// none, or no file.
func envFileValue(f string) string {
	b, err := os.ReadFile(f)
	if err != nil {
		return ""
	}
	b = colonForm.ReplaceAll(bytes.TrimPrefix(b, []byte("\ufeff")), []byte("$1="))
	var v string
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		k, val, ok := strings.Cut(line, "=")
		if !ok || exportPrefix.ReplaceAllString(strings.TrimSpace(k), "") != "QWEN_HOME" {
			continue
		}
		val = strings.TrimSpace(val)
		if len(val) >= 2 && strings.ContainsRune(`"'`+"`", rune(val[0])) {
			if end := strings.IndexByte(val[1:], val[0]); end >= 0 {
				v = val[1 : end+1]
				if val[0] == '"' {
					v = strings.ReplaceAll(v, `\n`, "\n")
				}
				continue
			}
		}
		v, _, _ = strings.Cut(val, "#")
		v = strings.TrimSpace(v)
	}
	return v
}

// exportPrefix is "export" and the blanks after it, before a key.
var exportPrefix = regexp.MustCompile(`^export\s+`)

// colonForm is "QWEN_HOME: value", which Qwen Code reads as
// "QWEN_HOME=value".
var colonForm = regexp.MustCompile(`(?m)^(\s*(?:export\s+)?QWEN_HOME):[^\S\r\n]+`)
