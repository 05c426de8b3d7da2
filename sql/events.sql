-- The events table of Ryan Blue's blog post "Metadata Indexing in Iceberg", which shows how the
-- manifest list, the manifests' partition tuples and their column metrics work as an index: daily
-- partitions of event time, bucketed by device, and its one-device, one-time-window query.
-- Run with  iceduck WAREHOUSE -f sql/events.sql ; EXPLAIN shows what the metadata index skipped.

CREATE NAMESPACE IF NOT EXISTS blog;
DROP TABLE IF EXISTS blog.events PURGE;

-- the post's DDL (Trino's bucket(column, N) argument order is accepted too)
CREATE TABLE blog.events (event_time timestamptz, device_id bigint, kind string, value double)
    PARTITIONED BY (days(event_time), bucket(device_id, 64));

-- a streaming job commits small batches: here one commit per day for the first week of
-- October 2021, 2,000 events a day from 100 devices: 7 snapshots, each adding one manifest
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-01 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-02 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-03 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-04 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-05 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-06 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);
INSERT INTO blog.events SELECT TIMESTAMPTZ '2021-10-07 00:00:00+00' + to_seconds(i * 43), i % 100, 'ping', i / 10.0 FROM range(0, 2000) r(i);

-- the post's query: device 74 between two instants
SELECT count(*) AS events, min(event_time) AS first, max(event_time) AS last
FROM blog.events
WHERE device_id = 74 AND event_time > '2021-10-01T10:00:00' AND event_time < '2021-10-04T20:00:00';

-- manifest list summaries -> manifest partition tuples -> column metrics: what was skipped
EXPLAIN SELECT * FROM blog.events
WHERE device_id = 74 AND event_time > '2021-10-01T10:00:00' AND event_time < '2021-10-04T20:00:00';
