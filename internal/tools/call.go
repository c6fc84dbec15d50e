package tools

import "github.com/tasksessiond/tasksessiond"

// Call is a decoded, validated tool call: the tool's name and, for a
// write, the change it makes (a TaskGet has only its Taskid). A TaskCreate
// sets Subject and Description (empty when not given); a TaskUpdate sets
// Taskid and what it changes.
type Call struct {
	Name string
	tasksessiond.Change
}

// Writes reports whether the call changes the store.
func (c Call) Writes() bool { return c.Name == TaskCreate || c.Name == TaskUpdate }

// Append is the log row of a write that changed t, with which of t's text
// fields the call set (a TaskCreate sets both).
func (c Call) Append(row tasksessiond.Call, t *tasksessiond.Task) tasksessiond.Append {
	a := tasksessiond.Append{Call: row, Task: t}
	if t != nil {
		a.SetSubject, a.SetDescription = c.Subject != nil, c.Description != nil
	}
	return a
}
