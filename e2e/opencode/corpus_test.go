package opencode_test

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
	"github.com/tasksessiond/tasksessiond/e2e/opencode"
)

func TestSetupCorpus(t *testing.T) {
	// Ensures, for OpenCode's config as users keep it (JSONC with comments
	// and trailing commas, a BOM and CRLF, a link), that the pinned
	// opencode reads what setup wrote (opencode debug config: its own
	// todowrite off), a second setup changes no byte and --uninstall gives
	// back the user's bytes (harness.SetupCorpus).
	t.Parallel()
	h := opencode.New(t, opencode.Options{NoSetup: true})
	cases := []harness.CorpusCase{
		{Name: "JSONC", Edit: func(f map[string]string) {
			f["opencode.jsonc"] = "// mine\n" + strings.TrimSuffix(strings.TrimSpace(f["opencode.json"]), "}") + ", /* the last */\n}\n"
			delete(f, "opencode.json")
		}},
		{Name: "BOMCRLF", Edit: func(f map[string]string) {
			f["opencode.json"] = "\ufeff" + strings.ReplaceAll(f["opencode.json"], "\n", "\r\n")
		}},
		{Name: "Link", Edit: func(f map[string]string) {}, Links: []string{"opencode.json"}},
	}
	h.SetupCorpus(t, "opencode", h.Config, cases, func(t *testing.T, setUp bool) {
		out := h.Command(t, 90*time.Second, "debug", "config")
		require.NoError(t, out.Err, "opencode cannot read its config: %s%s", out.Stdout, out.Stderr)
		if setUp {
			assert.Contains(t, out.Stdout, `"todowrite": false`)
		}
	})
}
