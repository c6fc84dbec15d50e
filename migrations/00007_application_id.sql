-- +goose Up
-- Marks the file as this daemon's in the SQLite header (bytes 68-71, the
-- application_id, "TSKD"): opening it, the daemon tells its own database
-- from another program's by reading 100 bytes instead of the schema.
PRAGMA application_id = 1414744900;

-- +goose Down
PRAGMA application_id = 0;
