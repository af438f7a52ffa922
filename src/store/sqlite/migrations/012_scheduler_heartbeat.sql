-- The scheduler's heartbeat (docs/scale-out.md, No scheduler running): one row, written
-- by every running scheduler every few seconds, so an API process can tell "schedules
-- are due and no scheduler has run" (a split deployment without --role scheduler).

CREATE TABLE scheduler_heartbeat (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  holder TEXT NOT NULL,
  beat_at INTEGER NOT NULL
) STRICT;
