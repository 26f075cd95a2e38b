"""node_exporter's textfile gather check, for the Prometheus tests and bench.

node_exporter's textfile collector reads every *.prom file of its folder into
one scrape; a series (name and label set) that two files hold is dropped as
"collected before with the same name and label values", and one family with
two help texts or types is refused. gather(paths) reproduces that check and
returns every series as (path, name, labels, value).

As a command: python3 tests/prom_gather.py FILE... prints one line, or the
first collision and exit 1.
"""
import re
import sys

LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)\{(.*)\} (\S+)$')
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def gather(paths):
    seen, meta, series = {}, {}, []
    for path in paths:
        for l in open(path):
            l = l.rstrip("\n")
            if l.startswith("# HELP ") or l.startswith("# TYPE "):
                fam, text = l[7:].split(" ", 1)
                key = (l[2], fam)
                assert meta.setdefault(key, text) == text, f"{fam}: two help texts or types ({path})"
                continue
            m = LINE.match(l)
            assert m, f"{path}: unparsed line {l!r}"
            labels = dict(LABEL.findall(m[2]))
            key = (m[1], tuple(sorted(labels.items())))
            assert key not in seen, f"{l!r} in {path} was collected before in {seen[key]}"
            seen[key] = path
            series.append((path, m[1], labels, float(m[3])))
    return series


if __name__ == "__main__":
    try:
        s = gather(sys.argv[1:])
    except AssertionError as e:
        print(f"FAIL: {e}")
        sys.exit(1)
    print(f"ok: {len(s)} series in {len(sys.argv) - 1} files, none collected twice")
