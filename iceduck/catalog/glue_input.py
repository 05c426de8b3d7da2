"""What an Iceberg table and namespace look like in the AWS Glue Data Catalog, as Iceberg
Java's ``IcebergToGlueConverter`` and ``GlueTableOperations`` (and PyIceberg's
``GlueCatalog``) write them, so a Glue table iceduck writes reads the same to Spark,
Athena, PyIceberg and Glue's own console. No I/O: dictionaries in boto3's request shapes.

A namespace is one Glue database (one level only: Glue has no nesting). A table is a Glue
table with ``TableType`` ``EXTERNAL_TABLE`` ("Iceberg does not distinguish managed and
external tables") whose ``Parameters`` hold ``table_type`` = ``ICEBERG``,
``metadata_location`` (the current metadata file: the one thing that matters) and
``previous_metadata_location``. The ``StorageDescriptor`` repeats the table's location
and columns "only for informational human read access" (Java's
``setTableInputInformation``): each column of the current schema, then the columns only
older schemas had, with parameters ``iceberg.field.id``, ``iceberg.field.optional`` and
``iceberg.field.current``.

A database's ``LocationUri`` is the namespace property ``location``, its ``Description``
the property ``comment`` (Java's ``GLUE_DB_LOCATION_KEY`` / ``GLUE_DB_DESCRIPTION_KEY``);
every other property is a database parameter.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from iceduck.catalog.hive_types import hive_type
from iceduck.errors import ValidationError
from iceduck.spec.table_metadata import TableMetadata
from iceduck.spec.types import (
    NestedField,
)

TABLE_TYPE = "table_type"
ICEBERG = "ICEBERG"
METADATA_LOCATION = "metadata_location"
PREVIOUS_METADATA_LOCATION = "previous_metadata_location"
EXTERNAL_TABLE = "EXTERNAL_TABLE"
ICEBERG_FIELD_ID = "iceberg.field.id"
ICEBERG_FIELD_OPTIONAL = "iceberg.field.optional"
ICEBERG_FIELD_CURRENT = "iceberg.field.current"
#: the namespace properties stored as the database's own fields
LOCATION_PROPERTY = "location"
COMMENT_PROPERTY = "comment"

#: Java's ``GLUE_DB_PATTERN`` / ``GLUE_TABLE_PATTERN``: "lowercase letters, numbers, and the
#: underscore character" (Athena's rule); ``glue.skip-name-validation`` turns the check off
_DATABASE_NAME = re.compile(r"^[a-z0-9_]{1,252}$")
_TABLE_NAME = re.compile(r"^[a-z0-9_]{1,255}$")

def check_database_name(name: str, validate: bool) -> None:
    """Java's ``validateNamespace``: 1-252 characters of ``[a-z0-9_]`` (unless ``validate`` is off)."""
    if validate and not _DATABASE_NAME.match(name):
        raise ValidationError(
            f"cannot use {name!r} as a Glue database name: it must be 1-252 characters of lowercase "
            "letters, numbers and underscores (set glue.skip-name-validation=true to skip this check)"
        )


def check_table_name(name: str, validate: bool) -> None:
    """Java's ``validateTableName``: 1-255 characters of ``[a-z0-9_]`` (unless ``validate`` is off)."""
    if validate and not _TABLE_NAME.match(name):
        raise ValidationError(
            f"cannot use {name!r} as a Glue table name: it must be 1-255 characters of lowercase "
            "letters, numbers and underscores (set glue.skip-name-validation=true to skip this check)"
        )


def _column(field: NestedField, current: bool) -> dict[str, Any]:
    column: dict[str, Any] = {
        "Name": field.name,
        "Type": hive_type(field.field_type),
        "Parameters": {
            ICEBERG_FIELD_ID: str(field.field_id),
            ICEBERG_FIELD_OPTIONAL: "true" if field.optional else "false",
            ICEBERG_FIELD_CURRENT: "true" if current else "false",
        },
    }
    if field.doc:
        column["Comment"] = field.doc
    return column


def columns(metadata: TableMetadata) -> list[dict[str, Any]]:
    """Java's ``toColumns``: the current schema's columns, then those only older schemas
    have (``iceberg.field.current`` = ``false``), each name once."""
    seen: set[str] = set()
    result = []
    current = metadata.schema()
    for schema, is_current in [(current, True)] + [
        (s, False) for s in metadata.schemas if s.schema_id != current.schema_id
    ]:
        for field in schema.fields:
            if field.name not in seen:
                seen.add(field.name)
                result.append(_column(field, is_current))
    return result


def table_parameters(
    existing: Mapping[str, str], metadata_location: str, previous_location: str | None
) -> dict[str, str]:
    """Java's ``prepareProperties``: the table's parameters kept, ``table_type`` and
    ``metadata_location`` set, ``previous_metadata_location`` set to the base's file when
    there is one."""
    parameters = dict(existing)
    parameters[TABLE_TYPE] = ICEBERG
    parameters[METADATA_LOCATION] = metadata_location
    if previous_location:
        parameters[PREVIOUS_METADATA_LOCATION] = previous_location
    return parameters


def table_input(name: str, metadata: TableMetadata, parameters: Mapping[str, str]) -> dict[str, Any]:
    """The ``TableInput`` of a create or update (Java's ``persistGlueTable``)."""
    return {
        "Name": name,
        "TableType": EXTERNAL_TABLE,
        "Parameters": dict(parameters),
        "StorageDescriptor": {"Location": metadata.location, "Columns": columns(metadata)},
    }


#: the fields of a Glue table (GetTable's answer) a TableInput can carry (Java's renameTable
#: copies "tableType, owner, parameters, storageDescriptor, description")
_COPIED_TABLE_FIELDS = ("TableType", "Owner", "Parameters", "StorageDescriptor", "Description")


def renamed_table_input(table: Mapping[str, Any], new_name: str) -> dict[str, Any]:
    """The ``TableInput`` creating ``new_name`` as a copy of ``table`` (Glue has no rename)."""
    copied = {key: table[key] for key in _COPIED_TABLE_FIELDS if key in table}
    return {"Name": new_name, **copied}


def database_input(name: str, properties: Mapping[str, str]) -> dict[str, Any]:
    """Java's ``toDatabaseInput``: ``location`` -> ``LocationUri``, ``comment`` ->
    ``Description``, the rest -> ``Parameters``."""
    result: dict[str, Any] = {"Name": name}
    parameters = {}
    for key, value in properties.items():
        if key == LOCATION_PROPERTY:
            result["LocationUri"] = value
        elif key == COMMENT_PROPERTY:
            result["Description"] = value
        else:
            parameters[key] = value
    result["Parameters"] = parameters
    return result


def namespace_properties(glue_db: Mapping[str, Any]) -> dict[str, str]:
    """Java's ``loadNamespaceMetadata``: the parameters, plus ``location`` and ``comment``
    from the database's own fields."""
    properties = {str(k): str(v) for k, v in (glue_db.get("Parameters") or {}).items()}
    if glue_db.get("LocationUri"):
        properties[LOCATION_PROPERTY] = str(glue_db["LocationUri"])
    if glue_db.get("Description"):
        properties[COMMENT_PROPERTY] = str(glue_db["Description"])
    return properties


def iceberg_table_type(table: Mapping[str, Any]) -> str | None:
    """The ``table_type`` parameter of a Glue table (None when it has none)."""
    value = (table.get("Parameters") or {}).get(TABLE_TYPE)
    return None if value is None else str(value)


def is_iceberg(table: Mapping[str, Any]) -> bool:
    """Java's ``GlueToIcebergConverter.isGlueIcebergTable``: ``table_type`` is ``iceberg``
    in any case."""
    kind = iceberg_table_type(table)
    return kind is not None and kind.lower() == ICEBERG.lower()
