-- DuckDB queries over a `pitools dataset` folder.
--   pitools dataset ~/.pi/agent/sessions -o pi-dataset
--   duckdb < docs/duckdb-examples.sql        (run from the folder that holds pi-dataset/)
-- Every table has a `copied` column: rows that a fork or clone copied from an ancestor session.
-- `WHERE NOT copied` counts each model call once across a fork family.
-- (tests/cli/test_dataset_cli.py runs every query below on a generated archive.)

CREATE OR REPLACE VIEW sessions    AS SELECT * FROM read_parquet('pi-dataset/sessions/**/*.parquet', union_by_name = true);
CREATE OR REPLACE VIEW entries     AS SELECT * FROM read_parquet('pi-dataset/entries/**/*.parquet', union_by_name = true);
CREATE OR REPLACE VIEW messages    AS SELECT * FROM read_parquet('pi-dataset/messages/**/*.parquet', union_by_name = true);
CREATE OR REPLACE VIEW tool_calls  AS SELECT * FROM read_parquet('pi-dataset/tool_calls/**/*.parquet', union_by_name = true);
CREATE OR REPLACE VIEW compactions AS SELECT * FROM read_parquet('pi-dataset/compactions/**/*.parquet', union_by_name = true);
CREATE OR REPLACE VIEW usage       AS SELECT * FROM read_parquet('pi-dataset/usage/**/*.parquet', union_by_name = true);

-- name: totals
-- Tokens and cost of the whole archive, fork history counted once.
SELECT
    sum(input_tokens)       AS input_tokens,
    sum(output_tokens)      AS output_tokens,
    sum(cache_read_tokens)  AS cache_read_tokens,
    sum(cache_write_tokens) AS cache_write_tokens,
    sum(total_tokens)       AS total_tokens,
    sum(cost)               AS cost
FROM usage
WHERE NOT copied;

-- name: cost_by_model_per_month
SELECT
    strftime(date_trunc('month', timestamp), '%Y-%m') AS month,
    provider,
    model,
    count(*)          AS calls,
    sum(total_tokens) AS tokens,
    round(sum(cost), 4) AS cost
FROM usage
WHERE NOT copied
GROUP BY ALL
ORDER BY month, cost DESC;

-- name: longest_sessions
-- Wall-clock span of each session's own entries (copied fork history left out). Grouped by
-- session_key: session ids are not unique (Pi's /export keeps the id).
SELECT
    s.path,
    s.session_id,
    s.project,
    s.name,
    count(*)                                  AS entries,
    min(e.timestamp)                          AS started,
    max(e.timestamp)                          AS ended,
    date_diff('second', min(e.timestamp), max(e.timestamp)) AS seconds
FROM sessions s
JOIN entries e USING (session_key)
WHERE NOT e.copied
GROUP BY ALL
ORDER BY seconds DESC
LIMIT 10;

-- name: most_failing_tools
SELECT
    name,
    count(*)                           AS calls,
    count(*) FILTER (WHERE is_error)   AS failures,
    round(count(*) FILTER (WHERE is_error) / count(*), 3) AS failure_rate,
    count(*) FILTER (WHERE result_entry_id IS NULL)       AS unanswered
FROM tool_calls
WHERE NOT copied
GROUP BY name
ORDER BY failures DESC, calls DESC;

-- name: context_before_compaction
-- How big the context was when each compaction ran (Pi's tokensBefore), and what it cost.
SELECT
    c.session_id,
    s.project,
    c.entry_id,
    c.timestamp,
    c.tokens_before,
    c.summary_chars,
    c.cost AS summary_cost
FROM compactions c
JOIN sessions s USING (session_key)
WHERE NOT c.copied
ORDER BY c.timestamp;

-- name: fork_families
-- Fork/clone families: how much history the children copied instead of paying for it again.
SELECT
    lineage_root,
    count(*)                 AS sessions,
    sum(copied_entries)      AS copied_entries,
    sum(own_total_tokens)    AS own_tokens,
    sum(total_tokens) - sum(own_total_tokens) AS copied_tokens
FROM sessions
GROUP BY lineage_root
HAVING count(*) > 1
ORDER BY sessions DESC;
