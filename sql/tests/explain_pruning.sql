-- Golden EXPLAIN: what the manifest index skips before DuckDB reads a file -- partitions by
-- identity, bucket and days, column metrics, and a point query using both.
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.orders (id bigint NOT NULL, region string, amount decimal(10,2), ts timestamp)
USING iceberg PARTITIONED BY (region, bucket(4, id), days(ts)) TBLPROPERTIES ('format-version' = '2')

-- May 2024: 24 orders over 2 regions x 4 buckets x 3 days (one manifest)
-- step: iceduck
INSERT INTO shop.orders SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END, i * 1.5,
    TIMESTAMPTZ '2024-05-01 10:00:00+00' + to_days(CAST(i % 3 AS INTEGER)) FROM range(24) r(i)

-- June 2024: 8 more orders, one day (a second manifest)
-- step: iceduck
INSERT INTO shop.orders SELECT i, 'eu', i * 1.5, TIMESTAMPTZ '2024-06-01 10:00:00+00' FROM range(24, 32) r(i)

-- No filter: every manifest and file.
-- step: iceduck
EXPLAIN SELECT count(*) FROM shop.orders
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 21 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 32
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)

-- Identity partition: half the files of May, and June's manifest.
-- step: iceduck
EXPLAIN SELECT sum(amount) FROM shop.orders WHERE region = 'us'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: region == 'us'
--   manifests: 2 total, 1 read, 1 skipped
--   data files: 9 read, 8 skipped (8 by partition, 0 by column metrics)
--   rows in files read: 12
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=us/id_bucket=0/ts_day=2024-05-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=0/ts_day=2024-05-02/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=1/ts_day=2024-05-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=1/ts_day=2024-05-02/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=1/ts_day=2024-05-03/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=2/ts_day=2024-05-02/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-01/<file>.parquet (2 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-02/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-03/<file>.parquet (3 rows)

-- Day partition, via the manifest list's partition summaries: May's manifest is skipped whole.
-- step: iceduck
EXPLAIN SELECT * FROM shop.orders WHERE ts >= TIMESTAMPTZ '2024-06-01 00:00:00+00'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: ts >= 2024-06-01T00:00:00+00:00
--   manifests: 2 total, 1 read, 1 skipped
--   data files: 4 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 8
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/id_bucket=0/ts_day=2024-06-01/<file>.parquet (3 rows)
--     <warehouse>/shop/orders/data/region=eu/id_bucket=1/ts_day=2024-06-01/<file>.parquet (2 rows)
--     <warehouse>/shop/orders/data/region=eu/id_bucket=2/ts_day=2024-06-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=eu/id_bucket=3/ts_day=2024-06-01/<file>.parquet (2 rows)

-- Day partition inside a manifest.
-- step: iceduck
EXPLAIN SELECT * FROM shop.orders WHERE ts < TIMESTAMPTZ '2024-05-02 00:00:00+00'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: ts < 2024-05-02T00:00:00+00:00
--   manifests: 2 total, 1 read, 1 skipped
--   data files: 5 read, 12 skipped (12 by partition, 0 by column metrics)
--   rows in files read: 8
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/id_bucket=0/ts_day=2024-05-01/<file>.parquet (3 rows)
--     <warehouse>/shop/orders/data/region=eu/id_bucket=1/ts_day=2024-05-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=0/ts_day=2024-05-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=1/ts_day=2024-05-01/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-01/<file>.parquet (2 rows)

-- A point query: the bucket of id 7 and its column bounds leave one file.
-- step: iceduck
EXPLAIN SELECT * FROM shop.orders WHERE id = 7
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: id == 7
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 3 read, 18 skipped (16 by partition, 2 by column metrics)
--   rows in files read: 6
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-01/<file>.parquet (2 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-02/<file>.parquet (1 rows)
--     <warehouse>/shop/orders/data/region=us/id_bucket=3/ts_day=2024-05-03/<file>.parquet (3 rows)

-- An IN list over buckets.
-- step: iceduck
EXPLAIN SELECT id FROM shop.orders WHERE id IN (1, 2, 3) AND region = 'eu'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 2> (current snapshot of main)
--   schema id: 0
--   pushed filter: (id in (1, 2, 3) and region == 'eu')
--   manifests: 2 total, 2 read, 0 skipped
--   data files: 2 read, 19 skipped (15 by partition, 4 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/id_bucket=0/ts_day=2024-05-01/<file>.parquet (3 rows)
--     <warehouse>/shop/orders/data/region=eu/id_bucket=0/ts_day=2024-05-03/<file>.parquet (1 rows)

-- step: iceduck
CREATE TABLE shop.events (id bigint NOT NULL, kind string) USING iceberg

-- Three appends, one file each, ids 0-99, 100-199, 200-299: no partitions, only column metrics.
-- step: iceduck
INSERT INTO shop.events SELECT i, 'k' || (i % 7) FROM range(0, 100) r(i)

-- step: iceduck
INSERT INTO shop.events SELECT i, 'k' || (i % 7) FROM range(100, 200) r(i)

-- step: iceduck
INSERT INTO shop.events SELECT i, 'k' || (i % 7) FROM range(200, 300) r(i)

-- Column metrics: two of the three files cannot hold ids 150-160.
-- step: iceduck
EXPLAIN SELECT * FROM shop.events WHERE id BETWEEN 150 AND 160
-- expect:
-- Iceberg scan of iceduck.shop.events
--   snapshot: <snapshot 3> (current snapshot of main)
--   schema id: 0
--   pushed filter: (id >= 150 and id <= 160)
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 1 read, 2 skipped (0 by partition, 2 by column metrics)
--   rows in files read: 100
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/events/data/<file>.parquet (100 rows)

-- Column metrics on strings: every file holds k0..k6, nothing is skipped.
-- step: iceduck
EXPLAIN SELECT * FROM shop.events WHERE kind = 'k3'
-- expect:
-- Iceberg scan of iceduck.shop.events
--   snapshot: <snapshot 3> (current snapshot of main)
--   schema id: 0
--   pushed filter: kind == 'k3'
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 300
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/events/data/<file>.parquet (100 rows)
--     <warehouse>/shop/events/data/<file>.parquet (100 rows)
--     <warehouse>/shop/events/data/<file>.parquet (100 rows)

-- Bounds no file reaches.
-- step: iceduck
EXPLAIN SELECT * FROM shop.events WHERE id > 1000
-- expect:
-- Iceberg scan of iceduck.shop.events
--   snapshot: <snapshot 3> (current snapshot of main)
--   schema id: 0
--   pushed filter: id > 1000
--   manifests: 3 total, 3 read, 0 skipped
--   data files: 0 read, 3 skipped (0 by partition, 3 by column metrics)
--   rows in files read: 0
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
