-- +goose Up
-- A successor's first tasks are kept once, as the rows of snapshot_tasks
-- that the tasks view reads and the daemon now loads too. The JSON
-- document beside them, which only the daemon read (so the two could
-- differ and nothing would notice), goes; the taskid its next TaskCreate
-- gets stays, as a column, as on SQLite.
ALTER TABLE snapshots ADD COLUMN next_taskid INTEGER;
UPDATE snapshots SET next_taskid = (snapshot::json ->> 'nextTaskid')::int;
ALTER TABLE snapshots ALTER COLUMN next_taskid SET NOT NULL;
ALTER TABLE snapshots ADD CHECK (next_taskid >= 1);
ALTER TABLE snapshots DROP COLUMN snapshot;

-- +goose Down
ALTER TABLE snapshots ADD COLUMN snapshot TEXT;
UPDATE snapshots b SET snapshot = json_build_object(
    'tasks', coalesce((SELECT json_agg(json_build_object('taskid', t.taskid, 'status', t.status, 'subject', t.subject,
                                                         'description', coalesce(t.description, '')) ORDER BY t.taskid)
                       FROM snapshot_tasks t WHERE t.session_id = b.session_id), '[]'::json),
    'nextTaskid', b.next_taskid)::text;
ALTER TABLE snapshots ALTER COLUMN snapshot SET NOT NULL;
ALTER TABLE snapshots DROP COLUMN next_taskid;
