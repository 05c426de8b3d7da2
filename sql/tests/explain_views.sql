-- Golden EXPLAIN of queries over Iceberg views: each use of a view is its query, so the
-- tables inside are scanned (and pruned by the view's own WHERE) as if written in place;
-- a view of a view, and an older version of a view, likewise.
-- Format: tests/support/scenario_script.py; runner: tests/sql/test_golden_scripts.py
-- (ICEDUCK_UPDATE_GOLDEN=1 rewrites the "-- expect:" blocks from iceduck's output).

-- step: iceduck
CREATE NAMESPACE shop

-- step: iceduck
CREATE TABLE shop.orders (id bigint, region string, amount decimal(10,2))
USING iceberg PARTITIONED BY (region)

-- step: iceduck
INSERT INTO shop.orders SELECT i, CASE WHEN i % 2 = 0 THEN 'eu' ELSE 'us' END, i * 1.5 FROM range(10) r(i)

-- The view's WHERE prunes the partition of the other region.
-- step: iceduck
CREATE VIEW shop.eu_orders (order_id, amount) AS SELECT id, amount FROM shop.orders WHERE region = 'eu'

-- step: iceduck
EXPLAIN SELECT sum(amount) FROM shop.eu_orders
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: region == 'eu'
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 1 skipped (1 by partition, 0 by column metrics)
--   rows in files read: 5
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/<file>.parquet (5 rows)

-- A view of a view: the table under both, scanned once per use.
-- step: iceduck
CREATE VIEW shop.big_eu AS SELECT order_id FROM shop.eu_orders WHERE amount > 5

-- step: iceduck
EXPLAIN SELECT count(*) FROM shop.big_eu
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: (region == 'eu' and amount > 5.00)
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 1 skipped (1 by partition, 0 by column metrics)
--   rows in files read: 5
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/<file>.parquet (5 rows)

-- A new version of the view reads another region; VERSION AS OF 1 reads the first.
-- step: iceduck
CREATE OR REPLACE VIEW shop.eu_orders (order_id, amount) AS SELECT id, amount FROM shop.orders WHERE region = 'us'

-- step: iceduck
EXPLAIN SELECT sum(amount) FROM shop.eu_orders FOR VERSION AS OF 1
-- expect:
-- Iceberg scan of iceduck.shop.orders
--   snapshot: <snapshot 1> (current snapshot of main)
--   schema id: 0
--   pushed filter: region == 'eu'
--   manifests: 1 total, 1 read, 0 skipped
--   data files: 1 read, 1 skipped (1 by partition, 0 by column metrics)
--   rows in files read: 5
--   delete files applied: 0 (0 position, 0 deletion vector, 0 equality)
--   files read:
--     <warehouse>/shop/orders/data/region=eu/<file>.parquet (5 rows)
