// Package sqlscan reads SQL columns straight into the fields of the
// domain's types, for both storage adapters: a column that may be NULL
// into a string, a JSON text into its bytes. A row is then scanned into a
// tasksessiond.Session or Call, with no row struct beside it:
//
//	rows.Scan(&s.ID, (*sqlscan.NullText)(&s.ParentID), (*sqlscan.JSON)(&s.Metadata))
package sqlscan

import (
	"encoding/json"
	"fmt"
)

// Row is a *sql.Row or *sql.Rows: what a row is scanned from.
type Row interface{ Scan(dest ...any) error }

// NullText is a text column that may be NULL, read as "".
type NullText string

func (n *NullText) Scan(v any) error {
	if v == nil {
		*n = ""
		return nil
	}
	s, err := Text(v)
	*n = NullText(s)
	return err
}

// JSON is a text column holding JSON, kept as its bytes.
type JSON json.RawMessage

func (j *JSON) Scan(v any) error {
	s, err := Text(v)
	*j = JSON(s)
	return err
}

// Text is a text column's value as a driver gives it (a string or bytes).
func Text(v any) (string, error) {
	switch x := v.(type) {
	case string:
		return x, nil
	case []byte:
		return string(x), nil
	}
	return "", fmt.Errorf("a text column holds %T", v)
}
