-- Branches and tags (issue 4: item 5): writes to ns.t.branch_<name> by iceduck and Spark, reads
-- of branches and tags. On the reference a branch or a tag is a copy of the table.
-- Parameters: $ns, $fv, $mode, $writer.

-- step: iceduck
CREATE NAMESPACE $ns

-- step: iceduck
-- table: $ns.t
CREATE TABLE $ns.t (id bigint, s string, cat string) USING iceberg PARTITIONED BY (cat)
TBLPROPERTIES ('format-version'='$fv', 'write.delete.mode'='$mode', 'write.update.mode'='$mode')

-- step: iceduck
INSERT INTO $ns.t VALUES (1, 'one', 'a'), (2, 'two', 'a'), (3, 'three', 'b')

-- step: iceduck
ALTER TABLE $ns.t CREATE TAG v1
-- reference: CREATE TABLE $ns.t__tag_v1 AS SELECT * FROM $ns.t

-- step: iceduck
ALTER TABLE $ns.t CREATE BRANCH dev
-- reference: CREATE TABLE $ns.t__dev AS SELECT * FROM $ns.t

-- step: iceduck
INSERT INTO $ns.t.branch_dev VALUES (10, 'dev ten', 'c')
-- reference: INSERT INTO $ns.t__dev VALUES (10, 'dev ten', 'c')

-- step: query
SELECT * FROM $ns.t.branch_dev
-- reference: SELECT * FROM $ns.t__dev

-- step: iceduck
INSERT INTO $ns.t VALUES (4, 'four', 'b')

-- step: iceduck
DELETE FROM $ns.t.branch_dev WHERE cat = 'a' AND id = 1
-- reference: DELETE FROM $ns.t__dev WHERE cat = 'a' AND id = 1

-- step: iceduck
UPDATE $ns.t.branch_dev SET s = 'on dev' WHERE id = 2
-- reference: UPDATE $ns.t__dev SET s = 'on dev' WHERE id = 2

-- step: spark
INSERT INTO $ns.t.branch_dev VALUES (11, 'spark on dev', 'c')
-- reference: INSERT INTO $ns.t__dev VALUES (11, 'spark on dev', 'c')

-- step: query
SELECT * FROM $ns.t.branch_dev
-- reference: SELECT * FROM $ns.t__dev

-- step: query
SELECT * FROM $ns.t VERSION AS OF 'v1'
-- reference: SELECT * FROM $ns.t__tag_v1

-- step: query
SELECT * FROM $ns.t.tag_v1
-- reference: SELECT * FROM $ns.t__tag_v1

-- step: query
SELECT * FROM $ns.t VERSION AS OF 'dev' WHERE cat = 'c'
-- reference: SELECT * FROM $ns.t__dev WHERE cat = 'c'

-- step: iceduck
ALTER TABLE $ns.t DROP BRANCH dev
-- reference: DROP TABLE $ns.t__dev

-- step: iceduck error=UserError
INSERT INTO $ns.t.branch_dev VALUES (12, 'no such branch', 'c')

-- step: iceduck
ALTER TABLE $ns.t DROP TAG v1
-- reference: DROP TABLE $ns.t__tag_v1

-- step: iceduck
INSERT INTO $ns.t VALUES (5, 'five', 'a')
