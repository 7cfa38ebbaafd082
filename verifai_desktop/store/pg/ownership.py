"""The check a collection's owner makes before writing: that the schema is its own, as
:mod:`.schema` makes it (tables, row-level security, policies), so that a schema another role
made first under the collection's name, or changed, is refused and never written into."""

from __future__ import annotations

from typing import TYPE_CHECKING

from verifai_desktop.errors import StoreUnavailable
from verifai_desktop.store.pg.schema import DATA_TABLES, HISTORY_TABLES

if TYPE_CHECKING:
    import psycopg

_ME = "to_regrole(quote_ident(current_user))"
"""The connecting role's id (quoted: a mixed-case name is not folded)."""


def _normal(expression: object) -> str:
    return "".join(str(expression or "").split())


def expected_policies(schema: str) -> set[tuple[str, str, str, str, str, str]]:
    """The policies :func:`.schema.create_statements` makes, as ``pg_policies`` shows them (``table,
    name, permissive, cmd, qual, with_check``; the expressions without white space)."""
    group = (
        "((acl_group)::oid=ANY(ARRAY(SELECTpg_roles.oidFROMpg_rolesWHERE"
        "pg_has_role(CURRENT_USER,pg_roles.oid,'MEMBER'::text))))"
    )
    asker = "((asked_by)::oid=((quote_ident((CURRENT_USER)::text))::regrole)::oid)"
    feedback = (
        f"({asker}AND(EXISTS(SELECT1FROM{schema}.answersaWHERE(a.answer_id=feedback.answer_id))))"
    )
    out = {(t, f"{t}_by_group", "PERMISSIVE", "ALL", group, group) for t in DATA_TABLES}
    out.add(("answers", "answers_by_asker", "PERMISSIVE", "ALL", asker, asker))
    out.add(("feedback", "feedback_by_asker", "PERMISSIVE", "ALL", asker, feedback))
    return out


def check_owned(conn: psycopg.Connection[tuple[object, ...]], schema: str, where: str) -> None:
    """Check that a collection's schema is the connecting role's own, as :mod:`.schema` makes it,
    before that role writes into it: the schema and every table, view and sequence in it owned
    by this role, row-level security enabled and forced on every table of
    :data:`~.schema.DATA_TABLES` and :data:`~.schema.HISTORY_TABLES`, and exactly the policies of
    :func:`expected_policies` (any other permissive policy would widen who reads).

    Raises:
        StoreUnavailable: kind ``permission``, naming the schema and its owner: this role does
            not own the schema (only the owner ingests), or the schema is not as made here
            (another role made it first, or changed it).
    """
    row = conn.execute(
        "SELECT pg_get_userbyid(nspowner), nspowner = " + _ME + ", current_user"
        " FROM pg_namespace WHERE nspname = %s",
        (schema,),
    ).fetchone()
    if row is None:
        raise StoreUnavailable(where, "schema", f"schema {schema} does not exist")
    owner, mine, me = str(row[0]), bool(row[1]), str(row[2])
    if not mine:
        raise StoreUnavailable(
            where,
            "permission",
            f"schema {schema} is owned by role {owner!r}, not by {me!r}: only the collection's "
            "owner ingests into it (a schema made by another role is never written into; if "
            f"{owner!r} should not own it, have an administrator drop it)",
        )
    refused: list[str] = []
    relations = conn.execute(
        "SELECT relname, pg_get_userbyid(relowner), relowner = " + _ME + ","
        " relrowsecurity, relforcerowsecurity FROM pg_class"
        " WHERE relnamespace = to_regnamespace(%s) AND relkind IN ('r', 'p', 'v', 'm', 'f', 'S')",
        (schema,),
    ).fetchall()
    secured = {str(r[0]): bool(r[3]) and bool(r[4]) for r in relations}
    refused += [f"{r[0]} is owned by {r[1]!r}" for r in relations if not r[2]]
    refused += [
        f"row-level security is not enabled and forced on {table}"
        for table in (*DATA_TABLES, *HISTORY_TABLES)
        if not secured.get(table, False)
    ]
    policies = {
        (str(r[0]), str(r[1]), str(r[2]), str(r[3]), _normal(r[4]), _normal(r[5]))
        for r in conn.execute(
            "SELECT tablename, policyname, permissive, cmd, qual, with_check FROM pg_policies"
            " WHERE schemaname = %s",
            (schema,),
        ).fetchall()
    }
    expected = expected_policies(schema)
    refused += [f"policy {p[1]} on {p[0]} is not one this app makes" for p in policies - expected]
    refused += [f"policy {p[1]} on {p[0]} is missing" for p in expected - policies]
    if refused:
        raise StoreUnavailable(
            where,
            "permission",
            f"schema {schema} (owner {owner!r}) is not as VerifAI makes it, so nothing is written "
            f"into it: {'; '.join(sorted(refused))}",
        )
