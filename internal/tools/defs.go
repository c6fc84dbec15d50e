// Package tools defines the four Task tools: their names, descriptions and
// JSON Schemas, the decoding and validation of their arguments, and the
// rendering of their results for the model.
package tools

import (
	"encoding/json"
	"fmt"
)

// Tool names, exactly as the model sees them.
const (
	TaskCreate = "TaskCreate"
	TaskList   = "TaskList"
	TaskGet    = "TaskGet"
	TaskUpdate = "TaskUpdate"
)

// Size bounds, in characters (Unicode code points), as the schemas'
// maxLength counts them. A subject is a one-line title; a description holds
// details. A task, escaped as JSON, fits well within what a host shows the
// model of one tool result (MaxResultChars), so TaskGet shows it whole.
const (
	MaxSubjectRunes     = 500
	MaxDescriptionRunes = 16_000
	// MaxLoggedDescriptionRunes is the limit of earlier versions, which
	// replay still honours (see DecodeLogged).
	MaxLoggedDescriptionRunes = 64 << 10
)

// Role says who is calling. The compact worker (the host's summariser) may
// only read.
type Role string

const (
	RoleAgent         Role = "agent"
	RoleCompactWorker Role = "compact_worker"
)

// ParseRole maps "" to the agent role and rejects anything unknown.
func ParseRole(s string) (Role, error) {
	switch Role(s) {
	case "", RoleAgent:
		return RoleAgent, nil
	case RoleCompactWorker:
		return RoleCompactWorker, nil
	}
	return "", fmt.Errorf("role must be %q or %q, got %q", RoleAgent, RoleCompactWorker, s)
}

// Def is one tool's definition.
type Def struct {
	Name         string
	Title        string
	Description  string
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage // of the structured result of a success
	Writes       bool
	Idempotent   bool     // calling it again with the same arguments changes nothing more
	params       []string // the argument names it takes, for error messages
}

// Schema fragments of the structured results (see result.go).
const (
	schemaHead   = `{"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",`
	statusSchema = `{"type":"string","enum":["pending","inprogress","completed","deleted"]}`
	taskSchema   = `{"type":"object","properties":{"taskid":{"type":"integer","minimum":1},"status":` + statusSchema +
		`,"subject":{"type":"string"},"description":{"type":"string"}},"required":["taskid","status","subject","description"],"additionalProperties":false}`
	countsSchema = `{"type":"object","properties":{"total":{"type":"integer","minimum":0},"pending":{"type":"integer","minimum":0},` +
		`"inprogress":{"type":"integer","minimum":0},"completed":{"type":"integer","minimum":0},"deleted":{"type":"integer","minimum":0}},` +
		`"required":["total","pending","inprogress","completed","deleted"],"additionalProperties":false}`
	briefSchema = `{"type":"object","properties":{"taskid":{"type":"integer","minimum":1},"status":` + statusSchema +
		`,"subject":{"type":"string"}},"required":["taskid","status","subject"],"additionalProperties":false}`

	changeSchema = schemaHead + `"properties":{"task":` + briefSchema + `,"counts":` + countsSchema +
		`,"inProgress":{"type":"array","items":{"type":"integer","minimum":1},"description":"After the change, the ids of the tasks in progress (the first 10), in taskid order."}},` +
		`"required":["task","counts"],"additionalProperties":false}`
	gotSchema = schemaHead + `"properties":{"task":` + taskSchema + `,"counts":` + countsSchema + `},` +
		`"required":["task","counts"],"additionalProperties":false}`
	listingSchema = schemaHead + `"properties":{"counts":` + countsSchema +
		`,"note":{"type":"string","description":"Set when the list was shortened to fit: how to read a task whole."}` +
		`,"tasks":{"type":"array","items":` + taskSchema + `,"description":"The tasks in taskid order (when shortened: descriptions cut or left out, folded and left-out tasks not here)."}` +
		`,"folded":{"type":"array","items":{"type":"object","properties":{"from":{"type":"integer","minimum":1},"to":{"type":"integer","minimum":1},"status":` + statusSchema + `},` +
		`"required":["from","to","status"],"additionalProperties":false},"description":"When shortened: runs of closed tasks of one status, consecutive in taskid order, shown as one line each."}` +
		`,"moreOpen":{"type":"integer","minimum":0,"description":"Open tasks left out to fit."}},` +
		`"required":["tasks","counts"],"additionalProperties":false}`
)

// taskidSchema is a taskid argument's schema: what the decoder
// takes (decodeTaskid), an integer or a string such as "2" or "#2". Hosts
// such as Gemini CLI check a call against the schema before it reaches
// us, so the schema must not be narrower than the decoder.
//
// anyOf, not a type array: Gemini CLI's validator (Ajv, strict) warns on
// the terminal about a union type.
const taskidSchema = `{"anyOf":[{"type":"integer"},{"type":"string","pattern":"^\\s*#?\\d+\\s*$"}]}`

// The descriptions are short and exact: a host sends them with every
// request, so each byte is paid once a turn.
var defs = []Def{
	{
		Name:  TaskCreate,
		Title: "Create task",
		Description: "Add a pending task, one per step of your plan; it gets the next taskid. " +
			"The list survives compaction.",
		InputSchema: json.RawMessage(`{"type":"object",` +
			`"properties":{"subject":{"type":"string"},"description":{"type":"string"}},` +
			`"required":["subject"]}`),
		OutputSchema: json.RawMessage(changeSchema),
		Writes:       true,
		params:       []string{"subject", "description"},
	},
	{
		Name:         TaskList,
		Title:        "List tasks",
		Description:  "Show every task in taskid order.",
		InputSchema:  json.RawMessage(`{"type":"object","properties":{}}`),
		OutputSchema: json.RawMessage(listingSchema),
		Idempotent:   true,
	},
	{
		Name:        TaskGet,
		Title:       "Get task",
		Description: "Show one task whole.",
		InputSchema: json.RawMessage(`{"type":"object",` +
			`"properties":{"taskid":` + taskidSchema + `},` +
			`"required":["taskid"]}`),
		OutputSchema: json.RawMessage(gotSchema),
		Idempotent:   true,
		params:       []string{"taskid"},
	},
	{
		Name:  TaskUpdate,
		Title: "Update task",
		Description: "Set a task's status (inprogress when started, completed when done, deleted to withdraw it), " +
			"subject or description.",
		InputSchema: json.RawMessage(`{"type":"object",` +
			`"properties":{"taskid":` + taskidSchema + `,` +
			`"status":{"type":"string","enum":["pending","inprogress","completed","deleted","in_progress","in-progress"]},` +
			`"subject":{"type":"string"},"description":{"type":"string"}},` +
			`"required":["taskid"]}`),
		OutputSchema: json.RawMessage(changeSchema),
		Writes:       true,
		// Setting the same values again changes nothing more; deletion
		// only marks a task, so it is not destructive either.
		Idempotent: true,
		params:     []string{"taskid", "status", "subject", "description"},
	},
}

// Lookup returns the definition of the named tool.
func Lookup(name string) (Def, bool) {
	for _, d := range defs {
		if d.Name == name {
			return d, true
		}
	}
	return Def{}, false
}

// Names lists the tool names in their canonical order.
func Names() []string {
	names := make([]string, len(defs))
	for i, d := range defs {
		names[i] = d.Name
	}
	return names
}

// Defs returns the tools a role may call: all four for the agent, the read
// tools for the compact worker.
func Defs(role Role) []Def {
	var out []Def
	for _, d := range defs {
		if role == RoleCompactWorker && d.Writes {
			continue
		}
		out = append(out, d)
	}
	return out
}

// Format is a provider's shape for a tool list.
type Format string

const (
	FormatMCP       Format = "mcp"
	FormatAnthropic Format = "anthropic"
	FormatOpenAI    Format = "openai"
)

// ParseFormat maps "" to MCP and rejects anything unknown.
func ParseFormat(s string) (Format, error) {
	switch Format(s) {
	case "", FormatMCP:
		return FormatMCP, nil
	case FormatAnthropic, FormatOpenAI:
		return Format(s), nil
	}
	return "", fmt.Errorf("format must be %q, %q or %q, got %q", FormatMCP, FormatAnthropic, FormatOpenAI, s)
}

// Render returns the tool definitions in a provider's shape.
func Render(ds []Def, f Format) []any {
	out := make([]any, 0, len(ds))
	for _, d := range ds {
		switch f {
		case FormatAnthropic:
			out = append(out, anthropicTool{Name: d.Name, Description: d.Description, InputSchema: d.InputSchema})
		case FormatOpenAI:
			out = append(out, openAITool{Type: "function", Function: openAIFunction{Name: d.Name, Description: d.Description, Parameters: d.InputSchema}})
		default:
			out = append(out, mcpTool{Name: d.Name, Title: d.Title, Description: d.Description,
				InputSchema: d.InputSchema, OutputSchema: d.OutputSchema, Annotations: d.annotations()})
		}
	}
	return out
}

type mcpTool struct {
	Name         string          `json:"name"`
	Title        string          `json:"title"`
	Description  string          `json:"description"`
	InputSchema  json.RawMessage `json:"inputSchema"`
	OutputSchema json.RawMessage `json:"outputSchema"`
	Annotations  Annotations     `json:"annotations"`
}

// Annotations are MCP tool annotations: hints a host uses to decide, say,
// whether a tool may run in a read-only (plan) mode without asking.
type Annotations struct {
	Title           string `json:"title"`
	ReadOnlyHint    bool   `json:"readOnlyHint"`
	DestructiveHint bool   `json:"destructiveHint"`
	IdempotentHint  bool   `json:"idempotentHint"`
	OpenWorldHint   bool   `json:"openWorldHint"`
}

// annotations: no tool reaches outside the session's list, and none
// destroys anything (deletion is a status).
func (d Def) annotations() Annotations {
	return Annotations{Title: d.Title, ReadOnlyHint: !d.Writes, IdempotentHint: d.Idempotent}
}

type anthropicTool struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
}

type openAITool struct {
	Type     string         `json:"type"`
	Function openAIFunction `json:"function"`
}

type openAIFunction struct {
	Name        string          `json:"name"`
	Description string          `json:"description"`
	Parameters  json.RawMessage `json:"parameters"`
}
