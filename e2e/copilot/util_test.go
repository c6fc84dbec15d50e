package copilot_test

import (
	"encoding/json"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/harness"
)

func jsonUnmarshal(s string, v any) error { return json.Unmarshal([]byte(s), v) }

// copilotRun bounds one run.
const copilotRun = 3 * time.Minute

// sessionOf is the session id a run's JSONL output names.
func sessionOf(stdout string) string {
	for _, line := range harness.JSONLines(stdout) {
		var e struct {
			SessionID string `json:"sessionId"`
		}
		if json.Unmarshal(line, &e) == nil && e.SessionID != "" {
			return e.SessionID
		}
	}
	return ""
}
