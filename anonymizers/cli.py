"""The ``anonymizers`` command: database, synthetic data, loading, releases, verification,
reports.

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

from anonymizers.errors import (
    AnonymizerError,
    DatabaseSetupError,
    InputError,
    PrivacyViolation,
)
from anonymizers.risks import RISKS

__all__ = ["main", "param_pairs"]


def _echo(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _ensure_database() -> str:
    """The database URL, starting the embedded cluster and migrating as needed."""
    import os

    from anonymizers.db.cluster import EmbeddedCluster
    from anonymizers.db.migrate import migrate

    url = os.environ.get("DATABASE_URL") or EmbeddedCluster.default().up(log=_echo)
    _reachable(url)
    applied = migrate(url)
    if applied:
        _echo(f"schema migrated: {', '.join(applied)}")
    return url


def _reachable(url: str) -> None:
    """A database that cannot be reached is the user's setting, not a bug: say which."""
    import psycopg

    from anonymizers.db.connection import connect

    try:
        connect(url).close()
    except psycopg.OperationalError as error:
        lines = str(error).strip().splitlines()
        raise DatabaseSetupError(
            f"cannot connect to the database of DATABASE_URL ({lines[-1] if lines else error!r}"
            "): check the URL (postgresql://USER@HOST/DBNAME, or ?host=SOCKET_DIR), or unset "
            "DATABASE_URL to use the embedded cluster") from None


def _input_file(path: Path, what: str) -> Path:
    """A file the command reads: one line, not a traceback, when it is not there."""
    if not path.is_file():
        raise InputError(f"{what} {path} is not a readable file: check the path")
    return path


def _output_folder(path: Path, option: str) -> Path:
    """A folder the command writes into, made now: before any long work, not after it."""
    import os

    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as error:
        raise InputError(f"{option} {path}: cannot make the folder ({error.strerror}); "
                         "choose a folder you can write to") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise InputError(f"{option} {path}: the folder is not writable; choose one you can "
                         "write to")
    return path


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
    _output_folder(args.out.parent, "--out")
    _output_folder(persons.parent, "--persons")
    started = time.monotonic()
    n_points, n_persons = write_city(config, args.out, persons)
    _echo(f"generated {n_points} points of {n_persons} persons in "
          f"{time.monotonic() - started:.1f} s")
    print(f"{args.out}\n{persons}")
    return 0


def cmd_load(args: argparse.Namespace) -> int:
    from anonymizers.loading import load_dataset

    _input_file(args.file, "FILE")
    for option in ("persons", "places"):
        if (given := getattr(args, option, None)) is not None:
            _input_file(given, f"--{option}")
    url = _ensure_database()
    started = time.monotonic()
    result = load_dataset(args.file, args.dataset, persons=args.persons,
                          places=getattr(args, "places", None), replace=args.replace,
                          sort=args.sort, url=url)
    print(result.summary())
    if warning := result.warning():  # persons unknown: k will count trajectories
        _echo(warning)
    _echo(f"load took {time.monotonic() - started:.1f} s")
    return 0


def cmd_qids(args: argparse.Namespace) -> int:
    """Quasi-identifiers of a dataset's persons (seed 003): load a CSV or generate them."""
    from anonymizers.families.mob.qids import generate_and_store_qids
    from anonymizers.loading.qids import load_qids

    url = _ensure_database()
    if args.action == "load":
        _input_file(args.file, "FILE")
        print(load_qids(args.file, args.dataset, url=url).summary())
    else:
        print(generate_and_store_qids(args.dataset, args.strategy, args.max_size, args.seed,
                                      interval_s=args.interval, url=url).summary())
    return 0


def param_pairs(pairs: list[str]) -> dict[str, Any]:
    """``--param key=value`` options as a dict of text values (the release parses them)."""
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
    from anonymizers.families.registry import method_entry
    from anonymizers.release import gate

    family = method_entry(args.method).family
    url = _ensure_database()
    os.environ["DATABASE_URL"] = url  # the DAG's tasks connect through the environment
    given = param_pairs(args.param)
    _refuse_unknown_params(args.method, given)
    conf = {"dataset": args.dataset, "method": args.method, "k": args.k,
            "k_counts": args.k_counts, "start": args.start, "end": args.end,
            **{risk.param: getattr(args, risk.param, None) for risk in RISKS},
            **gate.release_params(args.method, given, args.k)}
    with connect(url) as conn:  # prepare's checks, in seconds, before Airflow starts
        spec = gate.resolve_spec(conn, conf, None, "check", say=_echo)
        if not gate.is_published(conn, spec):
            gate.check_composition(conn, spec)
            gate.check_precision(spec)
            gate.check_enough_owners(conn, spec)
    _echo(f"running DAG {family} for {spec.release_name} "
          "(Airflow's log: $AIRFLOW_HOME/logs) ...")
    started = time.monotonic()
    run_dag(family, conf)
    _echo(f"done in {time.monotonic() - started:.1f} s")
    print(_summary(url, spec.release_name))
    _echo(f"query it as analyst:\n  psql \"{_analyst_url(url)}\" -c "
          f"'SELECT name, value, unit FROM {spec.release_name}.metrics'")
    print(spec.release_name)
    return 0


def _refuse_unknown_params(method: str, given: dict[str, Any]) -> None:
    """A --param the method does not take is a typo or the wrong method: say which exist."""
    from anonymizers.errors import InputError
    from anonymizers.families.registry import MACHINERY_PARAMS, method_entry

    known = {spec.name for spec in (*method_entry(method).params, *MACHINERY_PARAMS)}
    unknown = sorted(set(given) - known)
    if unknown:
        raise InputError(f"method {method} has no parameter {', '.join(unknown)}; its "
                         f"parameters are {', '.join(sorted(known))} (see release --help)")


def _summary(url: str, release: str) -> str:
    """What was published, from the release's own manifest."""
    from anonymizers.db.connection import connect
    from anonymizers.db.sqlfiles import fetch_row

    with connect(url) as conn:
        row = fetch_row(conn, "release/summary.sql", {"schema": release}, release=release)
    if row is None:
        raise AnonymizerError(f"release {release} has no manifest row")
    suppressed = row["suppressed"]
    return (f"published {release}: {row['method']}, k={row['k']} distinct {row['k_counts']}; "
            f"{row['trajectories_out']} {row['published_unit']} published, "
            f"{'fewer than k' if suppressed is None else suppressed} suppressed; "
            f"tables {row['tables']}; verifier passed: {row['passed']}")


def _analyst_url(url: str) -> str:
    """The psql line an analyst uses: its own password (the cluster's passfile), not ours."""
    from anonymizers.db.connection import analyst_url

    return analyst_url(url)


def cmd_verify(args: argparse.Namespace) -> int:
    from anonymizers.db.connection import connect
    from anonymizers.verifiers import verify_release

    url = _ensure_database()
    with connect(url) as conn:
        result = verify_release(conn, args.release)
    print(json.dumps(result.to_json(), indent=2))
    if not result.passed:
        raise PrivacyViolation(f"{args.release} violates its privacy model "
                               f"({len(result.violations)} violation(s))")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    """A static HTML page with PNG figures of a release, readable offline."""
    from anonymizers.db.connection import connect
    from anonymizers.reports.build import build_report

    _output_folder(args.out, "--out")
    url = _ensure_database()
    with connect(url) as conn:
        report = build_report(conn, args.release, args.out, log=_echo)
    print(report.page)
    return 0


def cmd_attack(args: argparse.Namespace) -> int:
    """The attack suite against a release and the raw data of its window."""
    if args.differencing:
        return _attack_differencing(args)
    from anonymizers.attacks.models import MODELS, OTHER_ATTACKS
    from anonymizers.attacks.release import AttackSettings, attack_release, format_table
    from anonymizers.db.connection import connect

    known = [*MODELS, *OTHER_ATTACKS]
    models = args.models.split(",") if args.models else None
    if unknown := sorted(set(models or ()) - set(known)):
        raise InputError(f"unknown attack model(s) {', '.join(unknown)}; choose among "
                         f"{', '.join(known)}")
    settings = AttackSettings(lengths=_int_list(args.lengths, "--lengths"),
                              max_targets=args.targets or None,
                              max_instances=args.instances or None, seed=args.seed)
    url = _ensure_database()
    with connect(url) as conn:
        attack = attack_release(conn, args.release, settings, models)
    print(json.dumps(attack.summaries(), indent=2) if args.json else format_table(attack))
    if breaches := attack.breaches():
        covered = sum(1 for breach in breaches if breach["covered"])
        raise PrivacyViolation(f"{len(breaches)} attack(s) beat 1/k ({covered} of them covered "
                               "by the privacy model), with no accepted attack risk")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Every method (or --methods) on one window at one k: utility against measured risk."""
    from anonymizers.compare.chooser import compare_methods
    from anonymizers.compare.page import markdown_table, write_report
    from anonymizers.families.registry import METHODS

    methods = args.methods.split(",") if args.methods else None
    if unknown := sorted(set(methods or ()) - set(METHODS)):
        raise InputError(f"unknown method(s) {', '.join(unknown)}; choose among "
                         f"{', '.join(METHODS)}")
    _output_folder(args.out, "--out")
    url = _ensure_database()
    comparison = compare_methods(url, args.dataset, args.k, args.start, args.end, methods,
                                 args.param, args.out, _echo,
                                 method_timeout=args.method_timeout)
    page = write_report(comparison, args.out)
    print(markdown_table(comparison), end="")
    print(page)
    return 0


def _attack_differencing(args: argparse.Namespace) -> int:
    """The differencing attack against the ledger, on request only: it reads other releases
    (not the raw data) and its pairs are the ledger's, so the suite's output stays one
    release's; the release's own metrics record no differencing (see attacks.differencing)."""
    from anonymizers.attacks.differencing import (
        differencing_against_ledger,
        format_differencing,
        results_json,
    )
    from anonymizers.db.connection import connect

    with connect(_ensure_database()) as conn:
        results = differencing_against_ledger(conn, args.release)
    print(results_json(results) if args.json else format_differencing(results))
    if isolated := sum(r.isolated for r in results):
        raise PrivacyViolation(f"{isolated} published count(s) difference into fewer than k "
                               "persons across the ledger's releases")
    return 0


def _int_list(text: str, option: str) -> tuple[int, ...]:
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise InputError(f"{option} takes comma-separated integers, e.g. 1,2,3") from None
    if not values or min(values) < 1:
        raise InputError(f"{option} takes integers of at least 1")
    return values


def cmd_releases(args: argparse.Namespace) -> int:
    from anonymizers.db.connection import connect
    from anonymizers.db.sqlfiles import fetch_rows

    url = _ensure_database()
    with connect(url) as conn:
        rows = fetch_rows(conn, "release/catalog.sql",
                          {"dataset": args.dataset, "method": args.method})
    if args.json:
        print(json.dumps(rows, indent=2, default=_json_value))
        return 0
    for row in rows:
        print(_release_line(row))
    if not rows:
        _echo("no releases yet" if args.dataset is None and args.method is None
              else "no release of that dataset and method")
    return 0


def _json_value(value: Any) -> Any:
    """Timestamps as ISO-8601, decimals and other values as their text."""
    return value.isoformat() if hasattr(value, "isoformat") else str(value)


def _release_line(row: dict[str, Any]) -> str:
    from anonymizers.families.registry import FAMILIES, METHODS

    method, t_in = row["method"], row["trajectories_in"]
    unit = FAMILIES[METHODS[method].family].published_unit if method in METHODS else "items"
    line = (f"{row['release_name']}  {row['dataset']} {method} k={row['k']}  "
            f"{row['window_start']:%Y-%m-%d %H:%M} .. {row['window_end']:%Y-%m-%d %H:%M}  "
            f"{row['trajectories_out']} {unit} published from "
            f"{'<k' if t_in is None else t_in} trajectories")
    if row["comparison"]:
        line += f"  [comparison {row['comparison']}: analyst cannot read it]"
    for risk in RISKS:
        if row.get(risk.column) and not (row["comparison"] and risk.name == "composition"):
            line += f"  {risk.name} risk accepted: {row[risk.column]}"
    return line


def cmd_cleanup(args: argparse.Namespace) -> int:
    """Drop the scratch schemas of runs that failed or were abandoned (release.scratch)."""
    from anonymizers.release.scratch import cleanup_scratch, retention_checked

    retention_checked(args.older_than)  # a bad duration is refused before the database starts
    url = _ensure_database()
    result = cleanup_scratch(args.older_than, orphans=args.orphans, dry_run=args.dry_run,
                             url=url)
    older_than = result.older_than
    if args.json:
        print(json.dumps(result.to_json(), indent=2))
    else:
        print("\n".join(result.lines()) if result.dropped else
              f"nothing to drop: no run idle or failed for longer than {older_than}"
              + ("" if args.orphans else " (orphans only with --orphans)"))
        for work_schema, why in result.kept:
            _echo(f"kept the scratch of run {work_schema}: {why}")
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
    from anonymizers.families.registry import method_entry

    # the grid's side, for every method that has one (the city is a few km wide)
    takes_cell_size = any(spec.name == "cell_size" for spec in method_entry(args.method).params)
    param = [f"cell_size={args.cell_size}"] if takes_cell_size else []
    return cmd_release(argparse.Namespace(dataset="demo", method=args.method, k=args.k,
                                          k_counts="persons", start=None, end=None,
                                          param=param, accept_composition_risk=(
                                              "synthetic data of `anonymizers demo`: it "
                                              "describes nobody")))


def _methods_help() -> str:
    """Every method with every parameter, its default and meaning (from the registry)."""
    from anonymizers.families.registry import FAMILIES, MACHINERY_PARAMS, METHODS

    lines = ["methods (--param KEY=VALUE):"]
    for family in FAMILIES.values():
        lines.append(f"\n  {family.title} (DAG {family.name}):")
        for method in (m for m in METHODS.values() if m.family == family.name):
            lines.append(f"    {method.name}: {method.variant}")
            lines += [f"      {spec.describe()}" for spec in method.params]
    lines.append("\n  every method also takes:")
    lines += [f"      {spec.describe()}" for spec in MACHINERY_PARAMS]
    return "\n".join(lines)


def cmd_airflow(args: argparse.Namespace) -> int:
    """``anonymizers airflow up|down|status|logs|env|schedules``: the real scheduler,
    dag-processor and api-server on the embedded cluster (or DATABASE_URL); ``up`` and
    ``schedules`` check the schedules file first (a wrong one: one line, nothing started)."""
    from anonymizers.airflow_service import AirflowService, export_lines
    from anonymizers.db.connection import database_url
    from anonymizers.schedules import check_retired_settings, load_schedules, schedules_path

    if args.action in ("up", "schedules"):
        check_retired_settings()
        declared = load_schedules()
        shown = [f"  {schedule.describe()}" for schedule in declared] or ["  (none)"]
        text = f"scheduled releases declared in {schedules_path()}:\n" + "\n".join(shown)
        if args.action == "schedules":
            print(text)
            return 0
        _echo(text)
    url = _ensure_database() if args.action == "up" else database_url()
    service = AirflowService.from_environment(url)
    if args.action == "up":
        service.up(log=_echo)
        print(service.status())
    elif args.action == "down":
        stopped = service.down(log=_echo)
        _echo(f"stopped {len(stopped)} process(es)" if stopped else "was not running")
    elif args.action == "status":
        print(service.status())
    elif args.action == "logs":
        print(service.logs(args.lines))
    else:
        print("\n".join(export_lines(service)))
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="anonymizers", description="Load movement data into PostGIS and publish "
        "anonymized, verified releases of it. A mistake prints one line saying what to do "
        "and exits 2; a failed privacy check exits 3.",
        epilog="`anonymizers COMMAND --help` describes each command; the documentation site "
        "(docs/) has the user and operator guides.")
    parser.add_argument("--version", action="version", version=_version_text(),
                        help="the package version and the commit or build it came from")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in (_db_parser, _generate_parser, _load_parser, _qids_parser, _release_parser,
                _verify_parser, _report_parser, _attack_parser, _compare_parser,
                _releases_parser, _cleanup_parser, _airflow_parser, _demo_parser):
        add(sub)
    return parser


def _actions(parser: argparse.ArgumentParser, described: dict[str, str],
             parent: argparse.ArgumentParser | None = None) -> dict[str, Any]:
    """Sub-commands of ``parser`` (``args.action``), each with its description in the help."""
    actions = parser.add_subparsers(dest="action", required=True, metavar="ACTION")
    return {name: actions.add_parser(name, help=text, description=text,
                                     parents=[parent] if parent else [])
            for name, text in described.items()}


def _db_parser(sub: Any) -> None:
    db = sub.add_parser("db", help="the embedded PostGIS cluster (or DATABASE_URL)")
    _actions(db, {
        "up": "create the cluster on first use (installing PostgreSQL + PostGIS with apt if "
              "needed), start it and print its URL",
        "down": "stop the embedded cluster (its data stay)",
        "status": "whether the embedded cluster runs, and where",
        "url": "print the database URL every other command uses"})
    db.set_defaults(func=cmd_db)


def _generate_parser(sub: Any) -> None:
    gen = sub.add_parser("generate", help="write a synthetic city (points + persons CSV)")
    gen.add_argument("--out", type=Path, required=True, help="the points CSV to write")
    gen.add_argument("--persons", type=Path, help="persons CSV (default: <out>_persons.csv)")
    gen.add_argument("--points", type=int, default=100_000, help="approximate number of fixes")
    gen.add_argument("--seed", type=int, default=0, help="seed of the city (default 0)")
    gen.add_argument("--lon", type=float, default=11.2558, help="city centre longitude")
    gen.add_argument("--lat", type=float, default=43.7696, help="city centre latitude")
    gen.add_argument("--days", type=int, default=1, help="days of movement (default 1)")
    gen.set_defaults(func=cmd_generate)


def _load_parser(sub: Any) -> None:
    load = sub.add_parser("load", help="validate and load a CSV/GeoParquet/GPKG into raw")
    load.add_argument("file", type=Path, help="GPS fixes: CSV traj_id,user_id,t,lon,lat, "
                      "GeoParquet or GeoPackage; with --places: CSV traj_id,user_id,t,place")
    load.add_argument("--dataset", required=True,
                      help="the name releases will use for these data (letters, digits, _)")
    load.add_argument("--places", type=Path,
                      help="FILE holds visits to places (stations, cell towers): their "
                           "positions, a CSV place,lon,lat (WGS84) or a GeoPackage/GeoJSON "
                           "of points with a place column")
    load.add_argument("--persons", type=Path, help="CSV with user_id and demographic columns")
    load.add_argument("--replace", action="store_true", help="swap an existing dataset atomically")
    load.add_argument("--sort", action="store_true", help="sort rows by traj_id, t before checks")
    load.set_defaults(func=cmd_load)


def _qids_parser(sub: Any) -> None:
    from anonymizers.families.mob.declaration import MobParams  # plain data, cheap

    qids = sub.add_parser("qids", help="quasi-identifiers per person (MOB): the times an "
                          "attacker may know")
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--dataset", required=True, help="the loaded dataset whose persons "
                        "the quasi-identifiers are of")
    actions = _actions(qids, {
        "load": "load your own quasi-identifiers from a CSV with columns user_id,t",
        "generate": "generate quasi-identifiers with one of the MOB paper's configurations"},
        parent=common)
    actions["load"].add_argument("file", type=Path, help="CSV with columns user_id,t")
    gen = actions["generate"]
    gen.add_argument("--strategy", default="graph",
                     choices=["random", "disjoint", "chain", "chains", "graph"],
                     help="the QID configuration (graph is the one of the MOB paper's "
                          "experiments; default graph)")
    gen.add_argument("--max-size", type=int, default=40, help="most times per QID (default 40)")
    gen.add_argument("--seed", type=int, default=0, help="seed of the draw (default 0)")
    gen.add_argument("--interval", type=int, default=MobParams().interval,
                     help="seconds between time points (the release's interval)")
    qids.set_defaults(func=cmd_qids)


def _release_parser(sub: Any) -> None:
    rel = sub.add_parser("release", help="build, verify and publish a release via Airflow",
                         epilog=_methods_help(),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    rel.add_argument("--dataset", required=True, help="a loaded dataset (see `load`)")
    rel.add_argument("--method", required=True, help="one of the methods below")
    rel.add_argument("--k", type=int, required=True,
                     help="every published item stands for at least k distinct persons")
    rel.add_argument("--k-counts", default="persons",
                     help="what k counts: distinct persons, the only choice (privacy rule 1)")
    for risk in RISKS:
        rel.add_argument(risk.flag, metavar="REASON",
                         help=f"publish although {risk.accepts}; the reason is recorded in "
                              "the manifest and the catalog")
    rel.add_argument("--start", help="window start, ISO-8601 (default: start of the data)")
    rel.add_argument("--end", help="window end, exclusive (default: end of the data)")
    rel.add_argument("--param", action="append", default=[], metavar="KEY=VALUE",
                     help="a parameter of the method or the machinery (listed below); "
                          "repeat for several")
    rel.set_defaults(func=cmd_release)


def _verify_parser(sub: Any) -> None:
    ver = sub.add_parser("verify", help="independently re-check a published release")
    ver.add_argument("release", help="a release name, as `releases` lists it")
    ver.set_defaults(func=cmd_verify)


def _report_parser(sub: Any) -> None:
    rep = sub.add_parser("report", help="HTML page + PNG figures of a release, readable offline")
    rep.add_argument("release", help="a release name, as `releases` lists it")
    rep.add_argument("--out", type=Path, required=True, help="folder for index.html and figures/")
    rep.set_defaults(func=cmd_report)


def _attack_parser(sub: Any) -> None:
    att = sub.add_parser("attack", help="the attack suite against a release: measured "
                         "re-identification risk (exit 3 if a covered attack beats 1/k)")
    att.add_argument("release", help="a release name, as `releases` lists it")
    att.add_argument("--models", help="comma-separated attack models (default: all)")
    att.add_argument("--lengths", default="1,2,3,4",
                     help="knowledge lengths j, comma-separated (default 1,2,3,4)")
    att.add_argument("--targets", type=int, default=200,
                     help="attack a seeded sample of this many targets (0: all; default 200)")
    att.add_argument("--instances", type=int, default=1000,
                     help="instances of knowledge per target before sampling (0: all; "
                     "default 1000)")
    att.add_argument("--seed", type=int, default=0, help="seed of the samples")
    att.add_argument("--json", action="store_true", help="print the summaries as JSON")
    att.add_argument("--differencing", action="store_true",
                     help="instead: difference the release's counts against every release of "
                          "the ledger whose window overlaps it (exit 3 if fewer than k "
                          "persons are certainly isolated)")
    att.set_defaults(func=cmd_attack)


def _compare_parser(sub: Any) -> None:
    cmp = sub.add_parser("compare", help="every method on one window at one k, each a "
                         "verified release for this comparison only: utility against "
                         "measured risk, run time and memory, one report")
    cmp.add_argument("--dataset", required=True, help="a loaded dataset (see `load`)")
    cmp.add_argument("--k", type=int, required=True,
                     help="every method's k: each published item stands for k persons")
    cmp.add_argument("--start", help="window start, ISO-8601 (default: the data's start)")
    cmp.add_argument("--end", help="window end, exclusive (default: the data's end)")
    cmp.add_argument("--methods", help="comma-separated (default: every registered method)")
    cmp.add_argument("--param", action="append", default=[], metavar="[METHOD.]KEY=VALUE",
                     help="a parameter for every compared method that takes it, or for one")
    cmp.add_argument("--method-timeout", type=float, metavar="SECONDS",
                     help="stop a method's release after this long (it is then a row "
                     "without a release)")
    cmp.add_argument("--out", type=Path, required=True, help="folder of the report")
    cmp.set_defaults(func=cmd_compare)


def _releases_parser(sub: Any) -> None:
    rels = sub.add_parser("releases", help="list the published releases (the catalog), oldest "
                          "first")
    rels.add_argument("--dataset", help="only the releases of this dataset")
    rels.add_argument("--method", help="only the releases of this method")
    rels.add_argument("--json", action="store_true",
                      help="print every column of the catalog as a JSON list")
    rels.set_defaults(func=cmd_releases)


def _airflow_parser(sub: Any) -> None:
    air = sub.add_parser("airflow", help="a real Airflow (scheduler, dag-processor, api-server) "
                         "on the embedded cluster, in the background")
    actions = _actions(air, {
        "up": "check the schedules file, then start the scheduler, DAG processor and API "
              "server (creating Airflow's database on first use); print where the UI is and "
              "how to sign in",
        "down": "stop every Airflow process `up` started",
        "status": "which Airflow processes run, the UI's address and where the logs are",
        "logs": "the last lines of each Airflow process's log",
        "env": "print the environment (`export` lines) the `airflow` command needs to talk "
               "to this Airflow: eval \"$(anonymizers airflow env)\"",
        "schedules": "check the schedules file and list the scheduled releases it declares"})
    actions["logs"].add_argument("--lines", type=int, default=20,
                                 help="lines of each component (default 20)")
    air.set_defaults(func=cmd_airflow)


def _demo_parser(sub: Any) -> None:
    demo = sub.add_parser("demo", help="generate, load and release a synthetic city end to end")
    demo.add_argument("--points", type=int, default=200_000,
                      help="approximate number of fixes of the city (default 200,000)")
    demo.add_argument("--k", type=int, default=5, help="the release's k (default 5)")
    demo.add_argument("--cell-size", type=float, default=500.0,
                      help="the grid's side in metres, for a method with a grid")
    demo.add_argument("--method", default="grid_kam_cut",
                      help="grid_kam_cut (fast), kam_cut or kam_rec (data-driven cells)")
    demo.add_argument("--seed", type=int, default=0, help="seed of the city (default 0)")
    demo.set_defaults(func=cmd_demo)


def _cleanup_parser(sub: Any) -> None:
    from anonymizers.release.retention import DEFAULT_RETENTION, RETENTION_ENV

    clean = sub.add_parser(
        "cleanup", help="drop the work and build schemas of runs that failed or were "
        "abandoned (every run also does this at its start, with the default retention)",
        description="Drop the scratch schemas (work_*, build_*) of every run whose last step "
        "ended or failed longer ago than --older-than, whatever its release, and forget "
        "those runs. A run whose step is running is never touched; published releases "
        "never are.")
    clean.add_argument("--older-than", metavar="DURATION",
                       help="how long a failed or idle run's schemas are kept, e.g. 7d, 12h, "
                            f"90m (at least 1h; default ${RETENTION_ENV}, else "
                            f"{DEFAULT_RETENTION})")
    clean.add_argument("--orphans", action="store_true",
                       help="also drop the scratch schemas that no run of the ledger knows "
                            "(left by an older version; their age is unknown)")
    clean.add_argument("--dry-run", action="store_true",
                       help="list what would be dropped and its size; drop nothing")
    clean.add_argument("--json", action="store_true", help="print the result as JSON")
    clean.set_defaults(func=cmd_cleanup)


def _version_text() -> str:
    from anonymizers.version import code_version

    return f"anonymizers {code_version()}"


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
