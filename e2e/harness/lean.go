package harness

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/tasksessiond/tasksessiond/e2e/modelapi"
)

// The standard session of issue 40, by which every host's cost is held:
// 20 TaskCreate (subjects of about 40 characters, descriptions of about
// 115), a TaskList, then each task set in progress and then completed
// (40 TaskUpdate), and a last TaskList: 62 calls, one a model turn.
const (
	// LeanFinalBudget bounds the bytes the session's final request carries
	// because of the Task tools (below Claude Code's own Task tools on
	// the same plan, 13,368).
	LeanFinalBudget = 13_000
	// LeanCumulatedBudget bounds the same summed over every request of the
	// session (Claude Code's own tools: 699,678).
	LeanCumulatedBudget = 699_678
	// LeanUpdateBudget bounds one status update's result as the model
	// reads it, with 20 open tasks.
	LeanUpdateBudget = 100
)

// LeanTimeout bounds one run of the standard session: 62 model turns
// take longer than a run's usual bound on a loaded machine.
const LeanTimeout = 5 * time.Minute

// PlanTask is one task of the standard session.
type PlanTask struct{ Subject, Description string }

// StandardPlan is the standard session's 20 tasks.
func StandardPlan() []PlanTask {
	areas := []string{"parser", "lexer", "encoder", "decoder", "schema", "config", "logger", "router", "cache", "client",
		"server", "store", "index", "queue", "worker", "auth", "metrics", "backup", "upgrade", "docs"}
	out := make([]PlanTask, len(areas))
	for i, a := range areas {
		subject := fmt.Sprintf("Refactor the %s package and its tests", a)
		desc := fmt.Sprintf("Move the %s code behind one small interface, keep its behaviour, add table tests for each case, "+
			"note the change.", a)
		out[i] = PlanTask{Subject: subject, Description: desc}
	}
	return out
}

// ToolNamer gives a Task tool's name as a host shows it to the model
// (Claude Code's mcp__tasks__TaskCreate, Gemini CLI's mcp_tasks_TaskCreate).
type ToolNamer func(tool string) string

// StandardCalls are the standard session's 62 model turns, each one call.
func StandardCalls(name ToolNamer) []modelapi.Reply {
	return StandardCallsAs(name, func(id int, status string) map[string]any {
		return map[string]any{"taskid": id, "status": status}
	})
}

// StandardCallsAs is StandardCalls with a TaskUpdate's arguments as update
// makes them (Claude Code's own TaskUpdate takes a string taskId).
func StandardCallsAs(name ToolNamer, update func(id int, status string) map[string]any) []modelapi.Reply {
	plan := StandardPlan()
	var out []modelapi.Reply
	for _, t := range plan {
		out = append(out, modelapi.Call(name("TaskCreate"), map[string]any{"subject": t.Subject, "description": t.Description}))
	}
	out = append(out, modelapi.Call(name("TaskList"), map[string]any{}))
	for i := range plan {
		out = append(out, modelapi.Call(name("TaskUpdate"), update(i+1, "in_progress")))
		out = append(out, modelapi.Call(name("TaskUpdate"), update(i+1, "completed")))
	}
	return append(out, modelapi.Call(name("TaskList"), map[string]any{}))
}

// Cost is what one request carries because of the Task tools, in bytes:
// their definitions (name, description and input schema as the host sent
// them), their results as the model reads them (without what the host
// adds around a result: Claude Code's reminders, Codex's wall time), and
// any other text of ours the request holds (the MCP server's
// instructions, a hook's context). The model's own arguments are not
// counted: the plan costs them with any tool.
type Cost struct {
	Definitions, Results, Context int
}

// Total is the request's cost.
func (c Cost) Total() int { return c.Definitions + c.Results + c.Context }

func (c Cost) String() string {
	return fmt.Sprintf("%d bytes (definitions %d, results %d, other text %d)", c.Total(), c.Definitions, c.Results, c.Context)
}

// Meter measures a host's requests.
type Meter struct {
	// Ours reports whether a tool (by the name the request shows) is one
	// of the Task tools.
	Ours func(name string) bool
	// Result is a result block's text as the model reads it of ours (nil:
	// the block's text).
	Result func(modelapi.Block) string
	// Texts are other texts of ours counted once each where the request
	// holds them (the server's instructions).
	Texts []string
	// HostParams are arguments the host adds to every tool's schema, its
	// own tools' too (Gemini CLI's wait_for_previous): not counted.
	HostParams []string
}

// CostOf measures r.
func (m Meter) CostOf(r *modelapi.Request) Cost {
	var c Cost
	for _, t := range r.Tools {
		if m.Ours(t.Name) {
			c.Definitions += len(t.Name) + len(t.Description) + len(t.InputSchema) - m.hostParams(t.InputSchema)
		}
	}
	for _, b := range r.ToolResults("") {
		if m.Ours(b.Name) {
			c.Results += len(m.ResultText(b))
		}
	}
	all := r.AllText()
	for _, s := range m.Texts {
		if s != "" && strings.Contains(all, s) {
			c.Context += len(s)
		}
	}
	return c
}

// hostParams is the length of the host's own properties in schema, each
// as a member `"name":{...},`.
func (m Meter) hostParams(schema json.RawMessage) int {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if len(m.HostParams) == 0 || json.Unmarshal(schema, &s) != nil {
		return 0
	}
	n := 0
	for _, p := range m.HostParams {
		if v, ok := s.Properties[p]; ok {
			n += len(strconv.Quote(p)) + 1 + len(v) + 1
		}
	}
	return n
}

// ResultText is b's text as Result reads it.
func (m Meter) ResultText(b modelapi.Block) string {
	if m.Result == nil {
		return b.Text
	}
	return m.Result(b)
}

// Cumulated is the sum of the costs of rs.
func (m Meter) Cumulated(rs []*modelapi.Request) int {
	n := 0
	for _, r := range rs {
		n += m.CostOf(r).Total()
	}
	return n
}

var taskidRE = regexp.MustCompile(`#([0-9]+)\b|"taskid":([0-9]+)`)

// TaskidOrder checks that a TaskList result names tasks 1 to n, each
// first named after the one before it: the store's order.
func TaskidOrder(text string, n int) error {
	seen := map[int]bool{}
	var order []int
	for _, m := range taskidRE.FindAllStringSubmatch(text, -1) {
		id, _ := strconv.Atoi(m[1] + m[2])
		if !seen[id] {
			seen[id] = true
			order = append(order, id)
		}
	}
	for i := 1; i <= n; i++ {
		if i > len(order) || order[i-1] != i {
			return fmt.Errorf("tasks are not listed in taskid order 1..%d (first seen: %v):\n%s", n, order, text)
		}
	}
	return nil
}

// taskLineRE is a task as a result shows it: "#3 [pending] Subject" in a
// list or TaskGet, "#3 pending: Subject" after a write.
var taskLineRE = regexp.MustCompile(`^#([0-9]+) (?:\[([a-z]+)\]|([a-z]+):) (.*)$`)

// ResultFields reads a Task tool's result text as the model reads it into
// the fields tests assert on: "message" (the whole text), "tasks" (each
// task the text lists: taskid, status, subject and, where shown,
// description) and "task" (the first of them: the task a write or TaskGet
// shows).
func ResultFields(text string) map[string]any {
	tasks := []any{}
	var cur map[string]any
	for _, line := range strings.Split(text, "\n") {
		if d, ok := strings.CutPrefix(line, "\t"); ok && cur != nil {
			if prev, _ := cur["description"].(string); prev != "" {
				d = prev + "\n" + d
			}
			cur["description"] = d
			continue
		}
		m := taskLineRE.FindStringSubmatch(line)
		if m == nil {
			cur = nil
			continue
		}
		id, _ := strconv.Atoi(m[1])
		cur = map[string]any{"taskid": float64(id), "status": m[2] + m[3], "subject": m[4], "description": ""}
		tasks = append(tasks, cur)
	}
	v := map[string]any{"message": text, "tasks": tasks}
	if len(tasks) > 0 {
		v["task"] = tasks[0]
	}
	return v
}
