package fsck

import (
	"context"
	"fmt"

	"github.com/tasksessiond/tasksessiond/internal/db"
)

// older says that a database at an older schema than this binary's must
// be upgraded before it is checked ("" for the current schema): every
// check but SQLite's own reads the current schema's tables, views and
// indexes, and would report what an upgrade changes as damage. fsck never
// upgrades a file: an upgrade is one-way, and the daemon's to make.
func older(ctx context.Context, view *db.DB) (string, error) {
	v, err := view.Schema(ctx)
	if err != nil {
		return "", err
	}
	if known := db.KnownSchema(); v < known {
		return fmt.Sprintf("schema %d: start the daemon once to upgrade it (this fsck checks schema %d, and upgrades nothing)", v, known), nil
	}
	return "", nil
}
