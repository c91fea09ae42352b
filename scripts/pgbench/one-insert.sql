-- One INSERT per commit: the database's own ceiling for durable commits on
-- this machine (every commit waits for its WAL flush, as agentd's do).
\set id random(1, 4000000000000000000)
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
VALUES ('pgbench', :id::text, 1, 1, '[{"seq":1,"type":"delta","data":{"text":"hi"}}]');
