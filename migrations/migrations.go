// Package migrations embeds the SQL schema migrations run by goose at start-up.
package migrations

import "embed"

// FS holds the numbered migration files.
//
//go:embed *.sql
var FS embed.FS
