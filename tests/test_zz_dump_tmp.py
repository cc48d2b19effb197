import json
import psycopg
from psycopg import sql

def test_dump(published_city, published_city_db):
    out = {}
    with psycopg.connect(published_city_db) as conn:
        for method, name in published_city.items():
            rows = conn.execute(sql.SQL("SELECT name, value, unit, description FROM {}.metrics ORDER BY 1").format(sql.Identifier(name))).fetchall()
            series = conn.execute(sql.SQL("SELECT series, x, value, unit FROM {}.metric_series ORDER BY 1,2").format(sql.Identifier(name))).fetchall()
            man = conn.execute(sql.SQL("SELECT * FROM {}.manifest").format(sql.Identifier(name)))
            m = dict(zip([c.name for c in man.description], man.fetchone()))
            out[method] = {"metrics": rows, "series": series, "manifest": {k: str(v) for k, v in m.items()}}
    json.dump(out, open("/tmp/shares/city_before.json", "w"), indent=1, default=str)
