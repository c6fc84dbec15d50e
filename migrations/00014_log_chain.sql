-- +goose Up
-- Every logged row carries a checksum of what it logged chained to the
-- row before it, and each session's head (its last seq and checksum) is
-- kept beside the log, written in the same transaction as the row: a
-- flipped byte, an edited, deleted, moved or copied row breaks the chain,
-- and the daemon refuses that session by name instead of serving another
-- list. A successor's first row chains to its snapshot (the tasks it
-- started from), so that an edit of the snapshot breaks the chain too.
-- tsd_checksum and tsd_snapshot_sum are the daemon's own functions (the
-- sqlite3 shell has neither): the rows logged before this schema are
-- chained here, from seq 1 on, as far as their seqs run without a gap (a gap is damage already,
-- left unchained for fsck to name).
ALTER TABLE tool_calls ADD COLUMN checksum INTEGER;

CREATE TABLE log_heads (
    session_id TEXT    PRIMARY KEY,
    seq        INTEGER NOT NULL CHECK (seq >= 1),
    checksum   INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

WITH RECURSIVE chain(session_id, seq, checksum) AS (
    SELECT session_id, seq, tsd_checksum(
        coalesce((SELECT tsd_snapshot_sum(b.next_taskid, (SELECT json_group_array(json_array(x.taskid, x.status, x.subject, x.description))
            FROM (SELECT * FROM snapshot_tasks st WHERE st.session_id = b.session_id ORDER BY st.taskid) x))
        FROM snapshots b WHERE b.session_id = tool_calls.session_id), 0),
        session_id, seq, call_id, name, arguments, is_error, result, forced)
    FROM tool_calls WHERE seq = 1
    UNION ALL
    SELECT t.session_id, t.seq, tsd_checksum(chain.checksum, t.session_id, t.seq, t.call_id, t.name, t.arguments, t.is_error, t.result, t.forced)
    FROM chain JOIN tool_calls t ON t.session_id = chain.session_id AND t.seq = chain.seq + 1
)
UPDATE tool_calls SET checksum = chain.checksum
FROM chain WHERE tool_calls.session_id = chain.session_id AND tool_calls.seq = chain.seq;

INSERT INTO log_heads (session_id, seq, checksum)
SELECT session_id, seq, checksum FROM tool_calls t
WHERE checksum IS NOT NULL AND NOT EXISTS (
    SELECT 1 FROM tool_calls n WHERE n.session_id = t.session_id AND n.seq = t.seq + 1 AND n.checksum IS NOT NULL);

-- +goose Down
DROP TABLE log_heads;
ALTER TABLE tool_calls DROP COLUMN checksum;
