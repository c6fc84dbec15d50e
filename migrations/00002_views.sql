-- +goose Up
-- Views for people with the sqlite3 shell.

-- The tasks still to do in sessions still in use.
CREATE VIEW open_tasks AS
SELECT t.session_id, s.title AS session_title, t.taskid, t.status, t.subject, t.description, t.updated_at
FROM tasks t JOIN sessions s ON s.id = t.session_id
WHERE t.status IN ('pending', 'inprogress') AND s.status = 'active';

-- One row per session: its place in a compaction chain and its counts.
CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at, s.updated_at,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id) AS tasks,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'pending') AS pending,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'inprogress') AS inprogress,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'completed') AS completed,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'deleted') AS deleted,
       (SELECT count(*) FROM tool_calls c WHERE c.session_id = s.id) AS calls
FROM sessions s;

-- The log, readable: what each call asked for and whether it failed.
CREATE VIEW call_log AS
SELECT session_id, seq, call_id, name,
       json_extract(arguments, '$.taskid') AS taskid,
       json_extract(arguments, '$.status') AS status,
       json_extract(arguments, '$.subject') AS subject,
       is_error, forced, created_at
FROM tool_calls;

-- +goose Down
DROP VIEW call_log;
DROP VIEW session_overview;
DROP VIEW open_tasks;
