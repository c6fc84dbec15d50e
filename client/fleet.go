package client

import (
	"encoding/json"

	"github.com/tasksessiond/tasksessiond/wire"
)

// ErrSessionLeased is a call for a session that another daemon of a fleet
// serves (fleet mode, on PostgreSQL); LeaseOwner names it.
var ErrSessionLeased = &Error{Code: wire.CodeSessionLeased}

// LeaseOwner returns the daemon that serves the session, from the data of
// an ErrSessionLeased error.
func (e *Error) LeaseOwner() string {
	var d wire.LeasedData
	json.Unmarshal(e.Data, &d)
	return d.Owner
}
