package config_test

import (
	"strings"
	"testing"

	"github.com/tasksessiond/tasksessiond/internal/host/config"
)

// FuzzTOMLBlock holds, for any TOML a host reads, that setup's block
// written and then removed gives the file back byte for byte, and that
// whatever a host then writes inside or around the block, writing the
// block again or removing it leaves TOML the host reads (or is refused).
func FuzzTOMLBlock(f *testing.F) {
	f.Add("model = \"o3\"\n", "[projects.\"/p\"]\ntrust_level = \"trusted\"\n")
	f.Add("# mine\n[mcp_servers.other]\ncommand = \"x\"\n", "[mcp_servers.tasks.env]\nX = \"1\"\n")
	f.Add("", "[mcp_servers.mine]\ncommand = \"y\"\nargs = []\n")
	f.Add("a = 1\r\n", "b = 2\r\n")
	body := "[mcp_servers.tasks]\ncommand = \"tasksessiond\"\n"
	f.Fuzz(func(t *testing.T, orig, host string) {
		if config.CheckTOML([]byte(orig)) != nil {
			return
		}
		out, err := config.SetBlock([]byte(orig), "tasksessiond", body, ours)
		if err != nil {
			return // refused, untouched
		}
		if err := config.CheckTOML(out); err != nil {
			t.Fatalf("setup's block made TOML the host cannot read: %v\n%q", err, out)
		}
		back, err := config.RemoveBlock(out, "tasksessiond", ours)
		if err != nil || string(back) != orig {
			t.Fatalf("removing the block did not give the file back (%v):\n%q\n%q", err, orig, back)
		}
		end := "# <<< tasksessiond <<<"
		for _, w := range []string{
			strings.Replace(string(out), end, host+end, 1), // inside, before the end marker
			string(out) + host,
			strings.Replace(string(out), "# >>> tasksessiond", host+"# >>> tasksessiond", 1),
		} {
			if config.CheckTOML([]byte(w)) != nil {
				continue
			}
			for _, next := range []string{body, strings.Replace(body, "tasksessiond", "/opt/tsd", 1)} {
				if again, err := config.SetBlock([]byte(w), "tasksessiond", next, ours); err == nil {
					if err := config.CheckTOML(again); err != nil {
						t.Fatalf("writing the block again made TOML the host cannot read: %v\n%q\n%q", err, w, again)
					}
				}
			}
			if gone, err := config.RemoveBlock([]byte(w), "tasksessiond", ours); err == nil {
				if err := config.CheckTOML(gone); err != nil {
					t.Fatalf("removing the block made TOML the host cannot read: %v\n%q\n%q", err, w, gone)
				}
			}
		}
	})
}
