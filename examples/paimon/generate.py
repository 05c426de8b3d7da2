"""Regenerate the small Paimon warehouse the README's "Paimon tables" section reads (run by
hand, in a venv with pypaimon 2.1.0, the Paimon project's Python SDK; it must not import
iceduck, whose pyarrow is newer than pypaimon accepts)::

    python3 -m venv /tmp/pypaimon && /tmp/pypaimon/bin/pip install pypaimon==2.1.0
    /tmp/pypaimon/bin/python examples/paimon/generate.py

Writes ``examples/paimon/warehouse`` afresh, database ``shop``:

* ``customers``: primary key ``id``, 2 buckets; three commits insert customers, move one
  to another city and delete another (``rowkind.field`` ``op``); tag ``launch`` on the first;
* ``events``: append-only, partitioned by ``day``; two commits.
"""

import os
import shutil

import pyarrow as pa
from pypaimon import CatalogFactory, Schema

HERE = os.path.dirname(os.path.abspath(__file__))
WAREHOUSE = os.path.join(HERE, "warehouse")


def commit(table, data):
    builder = table.new_batch_write_builder()
    write, finish = builder.new_write(), builder.new_commit()
    write.write_arrow(data)
    finish.commit(write.prepare_commit())
    write.close()
    finish.close()


def main():
    shutil.rmtree(WAREHOUSE, ignore_errors=True)
    catalog = CatalogFactory.create({"warehouse": WAREHOUSE})
    catalog.create_database("shop", False)
    customers = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            ("name", pa.string()),
            ("city", pa.string()),
            ("op", pa.string()),
        ]
    )
    catalog.create_table(
        "shop.customers",
        Schema.from_pyarrow_schema(
            customers, primary_keys=["id"], options={"bucket": "2", "rowkind.field": "op"}
        ),
        False,
    )
    table = catalog.get_table("shop.customers")
    commit(
        table,
        pa.table(
            {
                "id": [1, 2, 3],
                "name": ["Ada", "Bo", "Cy"],
                "city": ["Oslo", "Rome", "Lima"],
                "op": ["+I"] * 3,
            },
            schema=customers,
        ),
    )
    table.create_tag("launch", 1)
    commit(
        table,
        pa.table(
            {"id": [2, 4], "name": ["Bo", "Di"], "city": ["Paris", "Kyiv"], "op": ["+U", "+I"]},
            schema=customers,
        ),
    )
    commit(table, pa.table({"id": [3], "name": ["Cy"], "city": ["Lima"], "op": ["-D"]}, schema=customers))
    events = pa.schema(
        [("customer_id", pa.int64()), ("kind", pa.string()), ("amount", pa.float64()), ("day", pa.string())]
    )
    catalog.create_table("shop.events", Schema.from_pyarrow_schema(events, partition_keys=["day"]), False)
    table = catalog.get_table("shop.events")
    commit(
        table,
        pa.table(
            {
                "customer_id": [1, 2, 1],
                "kind": ["view", "buy", "buy"],
                "amount": [0.0, 30.0, 12.5],
                "day": ["2024-05-01"] * 3,
            },
            schema=events,
        ),
    )
    commit(
        table,
        pa.table(
            {
                "customer_id": [4, 2],
                "kind": ["buy", "view"],
                "amount": [99.0, 0.0],
                "day": ["2024-05-02"] * 2,
            },
            schema=events,
        ),
    )


if __name__ == "__main__":
    main()
