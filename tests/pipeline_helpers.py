"""Run a release's steps in-process (no Airflow) for fast gate tests: prepare, then the
method's steps (the registry's), then the shared ones."""

from __future__ import annotations

from typing import Any

from psycopg import sql

from anonymizers.families.registry import SHARED_STEPS_AFTER, method_entry
from anonymizers.pipeline import steps

STEP_ORDER = ["project", "grid_membership", "visits_and_flows", "anonymize", "build_release",
              "manifest", "metrics", "verify", "publish", "cleanup"]


def release_params(dataset: str = "city", k: int = 3, **extra: Any) -> dict[str, Any]:
    return {"dataset": dataset, "method": "grid_kam_cut", "k": k, "k_counts": "persons",
            "cell_size": 500.0, **extra}


def run_steps(params: dict[str, Any], run_id: str = "run-1",
              until: str | None = None) -> dict[str, Any] | None:
    """prepare + every step up to and including ``until``; returns the spec (None: no-op)."""
    spec = steps.prepare(params, None, run_id)
    if spec is None:
        return None
    order = [*method_entry(params["method"]).steps, *SHARED_STEPS_AFTER]
    for name in order:
        steps.run_step(name, spec)
        if name == until:
            break
    return spec


def catalog_rows(conn) -> list[tuple]:
    return conn.execute("SELECT release_name FROM catalog.releases ORDER BY 1").fetchall()


def schemas(conn, prefix: str) -> list[str]:
    rows = conn.execute("SELECT nspname FROM pg_namespace WHERE nspname LIKE %s ORDER BY 1",
                        (prefix + "%",)).fetchall()
    return [row[0] for row in rows]


def assert_plants_refused(conn, schema: str, plants: dict[str, tuple[str, str]]) -> None:
    """Each planted violation (an SQL statement with ``{s}`` for ``schema``), applied alone
    and rolled back, makes the verifier refuse ``schema`` with a violation naming it."""
    from anonymizers.verifiers import verify_release

    for plant, (statement, expected) in plants.items():
        with conn.transaction(force_rollback=True):
            conn.execute(sql.SQL(statement).format(s=sql.Identifier(schema)))
            result = verify_release(conn, schema)
            assert not result.passed, plant
            assert any(expected in v for v in result.violations), (plant, result.violations)
