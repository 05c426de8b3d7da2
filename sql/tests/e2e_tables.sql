-- Table lifecycle (issue 4: item 1): CTAS, CREATE OR REPLACE (with and without a query),
-- RENAME TABLE, DROP TABLE PURGE (the runner checks every file of the table is gone).
-- Parameters: $ns, $fv, $mode, $writer.

-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
-- table: $ns.src
CREATE TABLE $ns.src (id bigint, s string, cat string, d date) USING iceberg
TBLPROPERTIES ('format-version'='$fv')

-- step: iceduck
INSERT INTO $ns.src VALUES (1, 'one', 'a', DATE '2024-01-01'), (2, 'two', 'b', DATE '1970-01-01'),
    (3, 'three', 'a', NULL), (4, NULL, NULL, DATE '1969-07-20')

-- step: iceduck
CREATE TABLE IF NOT EXISTS $ns.src (other int) USING iceberg

-- step: iceduck
-- table: $ns.c
CREATE TABLE $ns.c USING iceberg PARTITIONED BY (cat) TBLPROPERTIES ('format-version'='$fv')
AS SELECT id, s, cat FROM $ns.src WHERE id > 1

-- step: iceduck
INSERT INTO $ns.c VALUES (5, 'five', 'c')

-- step: iceduck
CREATE OR REPLACE TABLE $ns.c USING iceberg TBLPROPERTIES ('format-version'='$fv')
AS SELECT id * 10 AS id, upper(s) AS s, d FROM $ns.src

-- step: iceduck
CREATE OR REPLACE TABLE $ns.c (id bigint NOT NULL, label string) USING iceberg
PARTITIONED BY (truncate(2, label)) TBLPROPERTIES ('format-version'='$fv')

-- step: iceduck
INSERT INTO $ns.c VALUES (1, 'alpha'), (2, 'beta')

-- step: spark
INSERT INTO $ns.c VALUES (3, 'gamma')

-- step: iceduck
-- table: $ns.c2
ALTER TABLE $ns.c RENAME TO $ns.c2

-- step: iceduck peers
INSERT INTO $ns.c2 VALUES (4, 'delta')

-- step: iceduck
-- table: $ns.src
DROP TABLE $ns.c2 PURGE

-- step: iceduck error=UserError
INSERT INTO $ns.c2 VALUES (5, 'gone')
