-- +goose Up
-- A call no longer rewrites its session's row (that dirtied a page of
-- sessions in every commit): a session's updated_at is the later of its
-- row's own and its last call's, as the daemon reads it.
DROP VIEW session_overview;
CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at,
       max(s.updated_at, coalesce((SELECT c.created_at FROM tool_calls c WHERE c.session_id = s.id ORDER BY c.seq DESC LIMIT 1), '')) AS updated_at,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id) AS tasks,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'pending') AS pending,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'inprogress') AS inprogress,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'completed') AS completed,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'deleted') AS deleted,
       (SELECT count(*) FROM tool_calls c WHERE c.session_id = s.id) AS calls
FROM sessions s;

-- +goose Down
DROP VIEW session_overview;
CREATE VIEW session_overview AS
SELECT s.id, s.title, s.status, s.parent_id, s.successor_id, s.created_at, s.updated_at,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id) AS tasks,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'pending') AS pending,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'inprogress') AS inprogress,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'completed') AS completed,
       (SELECT count(*) FROM tasks t WHERE t.session_id = s.id AND t.status = 'deleted') AS deleted,
       (SELECT count(*) FROM tool_calls c WHERE c.session_id = s.id) AS calls
FROM sessions s;
