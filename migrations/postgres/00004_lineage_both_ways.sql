-- +goose Up
-- A session's lineage is read both ways (its parent_id, and the session
-- whose successor_id names it; its successor_id, and the session whose
-- parent_id names it), as on SQLite, so that one column edited by hand does
-- not break exactly-once or unseal a session: these find each way by its key.
CREATE INDEX sessions_parent ON sessions (parent_id) WHERE parent_id IS NOT NULL;
CREATE INDEX sessions_successor ON sessions (successor_id) WHERE successor_id IS NOT NULL;

-- +goose Down
DROP INDEX sessions_successor;
DROP INDEX sessions_parent;
