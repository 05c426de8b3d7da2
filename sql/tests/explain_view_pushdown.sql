-- Golden EXPLAIN of filters written outside a view: they prune the files of the tables inside
-- a catalog view, a session view and a subquery in FROM as if written there, and stop at a
-- view that aggregates (the filter is still applied: only the files read change).
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.orders (id bigint, region string, amount decimal(10,2))
USING iceberg PARTITIONED BY (region)

-- step: iceduck
INSERT INTO shop.orders SELECT i, CASE WHEN i % 3 = 0 THEN 'eu' WHEN i % 3 = 1 THEN 'us' ELSE 'apac' END, i * 1.5 FROM range(12) r(i)

-- step: iceduck
CREATE VIEW shop.priced (order_id, zone, price) AS SELECT id, region, amount FROM shop.orders

-- A filter on the catalog view's column zone prunes the partitions of the other regions.
-- step: iceduck
EXPLAIN SELECT sum(price) FROM shop.priced WHERE zone = 'eu'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: region == 'eu'
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 2 skipped (2 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/<file>.parquet (4 rows)

-- step: iceduck
CREATE TEMP VIEW recent AS SELECT id AS k, region FROM shop.orders WHERE amount > 1

-- A session view: its query is a derived table, which the filter reaches.
-- step: iceduck
EXPLAIN SELECT k FROM recent WHERE region = 'us'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: (amount > 1.00 and region == 'us')
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 2 skipped (2 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=us/<file>.parquet (4 rows)

-- A subquery in FROM, renaming the column.
-- step: iceduck
EXPLAIN SELECT * FROM (SELECT region AS r, id FROM shop.orders) AS s WHERE s.r = 'apac'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: region == 'apac'
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 2 skipped (2 by partition, 0 by column metrics)
--   rows in files read: 4
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=apac/<file>.parquet (4 rows)

-- A view that aggregates: a filter on its output is not one on its rows, so nothing is pushed.
-- step: iceduck
CREATE VIEW shop.by_region (zone, total) AS SELECT region, sum(amount) FROM shop.orders GROUP BY region

-- step: iceduck
EXPLAIN SELECT total FROM shop.by_region WHERE zone = 'eu'
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: none
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 3 read, 0 skipped (0 by partition, 0 by column metrics)
--   rows in files read: 12
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=apac/<file>.parquet (4 rows)
--     <warehouse>/shop/orders/data/region=eu/<file>.parquet (4 rows)
--     <warehouse>/shop/orders/data/region=us/<file>.parquet (4 rows)
