"""The ``anonymizers`` command: database, synthetic data, loading, releases, verification.

User mistakes (AnonymizerError) print one clear line and exit 2, without a traceback;
a failed privacy check exits 3; anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path
from typing import Any

from anonymizers.errors import AnonymizerError, PrivacyViolation

__all__ = ["main"]


def _echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _ensure_database() -> str:
    """The database URL, starting the embedded cluster and migrating as needed."""
    import os

    from anonymizers.db.cluster import EmbeddedCluster
    from anonymizers.db.migrate import migrate

    url = os.environ.get("DATABASE_URL") or EmbeddedCluster.default().up(log=_echo)
    applied = migrate(url)
    if applied:
        _echo(f"schema migrated: {', '.join(applied)}")
    return url


def cmd_db(args: argparse.Namespace) -> int:
    from anonymizers.db.cluster import EmbeddedCluster

    cluster = EmbeddedCluster.default()
    if args.action == "up":
        url = _ensure_database()
        _echo(f"as analyst (reads releases and the catalog only):\n  psql \"{_analyst_url(url)}\"")
        print(url)
    elif args.action == "down":
        _echo("stopped" if cluster.down() else "was not running")
    elif args.action == "status":
        print(cluster.status())
    else:
        from anonymizers.db.connection import database_url

        print(database_url())
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from anonymizers.synthetic import CityConfig, write_city

    config = CityConfig(seed=args.seed, target_points=args.points, origin_lon=args.lon,
                        origin_lat=args.lat, days=args.days)
    persons = args.persons or args.out.with_name(args.out.stem.split(".")[0] + "_persons.csv")
    started = time.monotonic()
    n_points, n_persons = write_city(config, args.out, persons)
    _echo(f"generated {n_points} points of {n_persons} persons in "
          f"{time.monotonic() - started:.1f} s")
    print(f"{args.out}\n{persons}")
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    from anonymizers.loading import load_dataset

    url = _ensure_database()
    started = time.monotonic()
    result = load_dataset(args.file, args.dataset, persons=args.persons, replace=args.replace,
                          sort=args.sort, url=url)
    print(result.summary())
    if warning := result.warning():  # persons unknown: k will count trajectories
        _echo(warning)
    _echo(f"load took {time.monotonic() - started:.1f} s")
    return 0


def _params(pairs: list[str]) -> dict[str, Any]:
    from anonymizers.errors import InputError

    params: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise InputError(f"--param {pair!r}: write it as key=value, e.g. cell_size=500")
        params[key] = value
    return params


def cmd_release(args: argparse.Namespace) -> int:
    import os

    from anonymizers.airflow_runner import run_dag
    from anonymizers.db.connection import connect
    from anonymizers.release import gate
    from anonymizers.release.spec import METHODS, machinery_params, method_params

    url = _ensure_database()
    os.environ["DATABASE_URL"] = url  # the DAG's tasks connect through the environment
    given = _params(args.param)
    conf = {"dataset": args.dataset, "method": args.method, "k": args.k,
            "k_counts": args.k_counts, "start": args.start, "end": args.end,
            "accept_composition_risk": args.accept_composition_risk,
            **method_params(args.method, given), **machinery_params(given, args.k)}
    with connect(url) as conn:  # fail fast on a bad dataset/method/window, before Airflow
        spec = gate.resolve_spec(conn, conf, None, "check")
        if not gate.is_published(conn, spec):
            gate.check_composition(conn, spec)
    _echo(f"running DAG {METHODS[args.method]} for {spec.release_name} "
          "(Airflow's log: $AIRFLOW_HOME/logs) ...")
    started = time.monotonic()
    run_dag(METHODS[args.method], conf)
    _echo(f"done in {time.monotonic() - started:.1f} s")
    print(_summary(url, spec.release_name))
    _echo(f"query it as analyst:\n  psql \"{_analyst_url(url)}\" -c "
          f"'SELECT name, value, unit FROM {spec.release_name}.metrics'")
    print(spec.release_name)
    return 0


def _summary(url: str, release: str) -> str:
    """What was published, from the catalog and the release's own tables."""
    from psycopg import sql

    from anonymizers.db.connection import connect

    with connect(url) as conn:
        row = conn.execute(sql.SQL(
            "SELECT m.method, m.k, m.k_counts, m.trajectories_in, m.trajectories_out, "
            "(SELECT count(*) FROM {r}.cells), (SELECT count(*) FROM {r}.flows), "
            "m.verifier_result ->> 'passed' FROM {r}.manifest AS m").format(
            r=sql.Identifier(release))).fetchone()
    if row is None:
        raise AnonymizerError(f"release {release} has no manifest row")
    method, k, counts, t_in, t_out, cells, flows, passed = row
    return (f"published {release}: {method}, k={k} distinct {counts}; trajectories "
            f"{t_out} of {t_in}; {cells} cells; {flows} flows; verifier passed: {passed}")


def _analyst_url(url: str) -> str:
    """The psql line an analyst uses: its own password (the cluster's passfile), not ours."""
    from anonymizers.db.connection import analyst_url

    return analyst_url(url)


def cmd_verify(args: argparse.Namespace) -> int:
    from anonymizers.db.connection import connect
    from anonymizers.verifiers.generalization import verify_generalization_release

    url = _ensure_database()
    with connect(url) as conn:
        result = verify_generalization_release(conn, args.release)
    print(json.dumps(result.to_json(), indent=2))
    if not result.passed:
        raise PrivacyViolation(f"{args.release} violates its privacy model "
                               f"({len(result.violations)} violation(s))")
    return 0


def cmd_releases(args: argparse.Namespace) -> int:
    from anonymizers.db.connection import connect

    url = _ensure_database()
    with connect(url) as conn:
        rows = conn.execute(
            "SELECT release_name, dataset, method, k, window_start, window_end, "
            "trajectories_in, trajectories_out, composition_risk FROM catalog.releases "
            "ORDER BY published_at").fetchall()
    for row in rows:
        name, dataset, method, k, start, end, t_in, t_out, risk = row
        line = (f"{name}  {dataset} {method} k={k}  {start:%Y-%m-%d %H:%M} .. "
                f"{end:%Y-%m-%d %H:%M}  trajectories {t_out}/{'<k' if t_in is None else t_in}")
        print(line + (f"  composition risk accepted: {risk}" if risk else ""))
    if not rows:
        _echo("no releases yet")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    """The README's first command: database, synthetic city, load, release, how to query."""
    from anonymizers.db.cluster import default_home

    folder = default_home() / "demo"
    folder.mkdir(parents=True, exist_ok=True)
    points, persons = folder / "city.csv", folder / "city_persons.csv"
    _ensure_database()
    _echo(f"1/3 generating a synthetic city of {args.points} fixes in {folder}")
    cmd_generate(argparse.Namespace(seed=args.seed, points=args.points, lon=11.2558,
                                    lat=43.7696, days=1, out=points, persons=persons))
    _echo("2/3 loading it as dataset 'demo'")
    cmd_load(argparse.Namespace(file=points, dataset="demo", persons=persons, replace=True,
                                sort=False))
    _echo(f"3/3 releasing it with {args.method}, k={args.k}, through the Airflow DAG")
    param = [f"cell_size={args.cell_size}"] if args.method == "grid_kam_cut" else []
    return cmd_release(argparse.Namespace(dataset="demo", method=args.method, k=args.k,
                                          k_counts="persons", start=None, end=None,
                                          param=param, accept_composition_risk=(
                                              "synthetic data of `anonymizers demo`: it "
                                              "describes nobody")))


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="anonymizers", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    db = sub.add_parser("db", help="the embedded PostGIS cluster (or DATABASE_URL)")
    db.add_argument("action", choices=["up", "down", "status", "url"])
    db.set_defaults(func=cmd_db)
    gen = sub.add_parser("generate", help="write a synthetic city (points + persons CSV)")
    gen.add_argument("--out", type=Path, required=True)
    gen.add_argument("--persons", type=Path, help="persons CSV (default: <out>_persons.csv)")
    gen.add_argument("--points", type=int, default=100_000, help="approximate number of fixes")
    gen.add_argument("--seed", type=int, default=0)
    gen.add_argument("--lon", type=float, default=11.2558, help="city centre longitude")
    gen.add_argument("--lat", type=float, default=43.7696, help="city centre latitude")
    gen.add_argument("--days", type=int, default=1)
    gen.set_defaults(func=cmd_generate)
    load = sub.add_parser("load", help="validate and load a CSV/GeoParquet/GPKG into raw")
    load.add_argument("file", type=Path)
    load.add_argument("--dataset", required=True)
    load.add_argument("--persons", type=Path, help="CSV with user_id and demographic columns")
    load.add_argument("--replace", action="store_true", help="swap an existing dataset atomically")
    load.add_argument("--sort", action="store_true", help="sort rows by traj_id, t before checks")
    load.set_defaults(func=cmd_load)
    rel = sub.add_parser("release", help="build, verify and publish a release via Airflow")
    rel.add_argument("--dataset", required=True)
    rel.add_argument("--method", required=True)
    rel.add_argument("--k", type=int, required=True)
    rel.add_argument("--k-counts", default="persons",
                     help="what k counts: distinct persons, the only choice (privacy rule 1)")
    rel.add_argument("--accept-composition-risk", metavar="REASON",
                     help="publish although the window overlaps a published release of the "
                          "dataset or is shorter than min_window_hours; the reason is recorded "
                          "in the manifest and the catalog")
    rel.add_argument("--start", help="window start, ISO-8601 (default: start of the data)")
    rel.add_argument("--end", help="window end, exclusive (default: end of the data)")
    rel.add_argument("--param", action="append", default=[], metavar="KEY=VALUE")
    rel.set_defaults(func=cmd_release)
    ver = sub.add_parser("verify", help="independently re-check a published release")
    ver.add_argument("release")
    ver.set_defaults(func=cmd_verify)
    sub.add_parser("releases", help="list the catalog").set_defaults(func=cmd_releases)
    demo = sub.add_parser("demo", help="generate, load and release a synthetic city end to end")
    demo.add_argument("--points", type=int, default=200_000)
    demo.add_argument("--k", type=int, default=5)
    demo.add_argument("--cell-size", type=float, default=500.0)
    demo.add_argument("--method", default="grid_kam_cut",
                      help="grid_kam_cut (fast), kam_cut or kam_rec (data-driven cells)")
    demo.add_argument("--seed", type=int, default=0)
    demo.set_defaults(func=cmd_demo)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    try:
        return int(args.func(args))
    except PrivacyViolation as error:
        _echo(f"privacy violation: {error}")
        return 3
    except AnonymizerError as error:
        _echo(f"error: {error}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
