-- A send-shaped script: what a blocking send to the echo agent writes, in
-- the two transactions agentd makes (create, then finish), with its rows'
-- shapes — a task, the user message, the context's position, the idempotency
-- key, the run head, the first frame and the lease; then the task's update,
-- the answer, the final frame and the lease's release.
\set id random(1, 4000000000000000000)
BEGIN;
INSERT INTO tasks (tenant, id, context_id, agent_id, state, usage, attempt, cancel_requested, version, created_at, updated_at)
VALUES ('pgbench', :id::text, :id::text, 'echo', 'working', '{}', 1, false, 1, now(), now());
INSERT INTO contexts (tenant, context_id, last_position) VALUES ('pgbench', :id::text, 1);
INSERT INTO messages (tenant, context_id, position, task_id, message)
VALUES ('pgbench', :id::text, 1, :id::text, '{"role":"user","parts":[{"type":"text","text":"hello world"}]}');
INSERT INTO idempotency_keys (tenant, context_id, message_id, task_id) VALUES ('pgbench', :id::text, :id::text, :id::text);
INSERT INTO runs (tenant, run_id, last_seq) VALUES ('pgbench', :id::text, 2);
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
VALUES ('pgbench', :id::text, 1, 2, '[{"seq":1,"type":"run.start","data":{}},{"seq":2,"type":"status","data":{"state":"working"}}]');
INSERT INTO leases (run_id, tenant, owner, generation, expires_at, ttl_us)
VALUES (:id::text, 'pgbench', 'pgbench', 1, now() + interval '5 seconds', 5000000);
COMMIT;
BEGIN;
UPDATE tasks SET state = 'completed', version = version + 1, updated_at = now() WHERE tenant = 'pgbench' AND id = :id::text;
UPDATE contexts SET last_position = last_position + 1 WHERE tenant = 'pgbench' AND context_id = :id::text;
INSERT INTO messages (tenant, context_id, position, task_id, message)
VALUES ('pgbench', :id::text, 2, :id::text, '{"role":"assistant","parts":[{"type":"text","text":"hello world"}]}');
UPDATE runs SET last_seq = 9 WHERE tenant = 'pgbench' AND run_id = :id::text;
INSERT INTO event_frames (tenant, run_id, seq_from, seq_to, events)
VALUES ('pgbench', :id::text, 3, 9, '[{"seq":3,"type":"delta","data":{"text":"hello world"}}]');
UPDATE leases SET owner = '', expires_at = now() WHERE run_id = :id::text AND owner = 'pgbench' AND generation = 1;
COMMIT;
