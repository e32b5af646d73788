"""Mutation testing of zarrkit with mutmut, one module at a time (``make mutate``).

Usage (from the repository root, with the project's venv)::

    python tools/mutate/run.py                        # every module of [tool.mutmut] only_mutate
    python tools/mutate/run.py storage/directory.py   # one module (path under src/zarrkit/)
    python tools/mutate/run.py storage indexing/      # every module under these directories
    python tools/mutate/run.py --incremental storage/keys.py   # reuse the last run's results

Each module gets its own work directory, ``.mutmut-cache/<module>/``, holding links to
``src`` and ``tests``, a ``pyproject.toml`` whose ``[tool.mutmut]`` is the repository's with
``only_mutate`` narrowed to the module and the test selection narrowed to the module's test
files (``TESTS`` below), and mutmut's own ``mutants/`` tree. Modules therefore never share
mutmut's cache, and each mutant runs only the tests of its module that reach the mutated
function (mutmut maps tests to functions in its first, "stats" run).

The package is installed in editable mode: the venv's ``.pth`` file puts the real ``src/``
on ``sys.path``. mutmut removes that entry in its own process; ``PYTHONPATH`` is set to the
mutated copy as well, so that test subprocesses (``sys.executable -c ...``) import the
mutants too. mutmut itself stops if no test reaches a mutated function or if a forced
failure does not fail the tests, which is what importing the unmutated package would cause.

The module's doctests run with its test files. mutmut counts any failing pytest run as a
kill, also one where pytest cannot find a test id: after each run every test id it used is
collected again, and the run is refused if any is missing.

A fresh run (the default) deletes the module's previous results: mutmut keeps a survivor's
verdict even after tests change, so only a fresh or ``--incremental`` run (which re-tests
the survivors) reflects the current tests. mutmut copies ``src`` and ``tests`` when it
starts: edits made during a run count from the next one.

The report gives per module: killed (tests failed), timeout (tests hung: counted as
killed), survived, no tests (no selected test reaches the function), total and the score
(killed + timeout) / total. It is also written to ``.mutmut-cache/report.md``.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CACHE = ROOT / ".mutmut-cache"
PACKAGE = "src/zarrkit/"

# The test files each module's mutants are checked against, by the module's path under
# src/zarrkit/ (the longest matching prefix wins). Files that do not exist are left out,
# so a test file may be listed before it is written.
TESTS: dict[str, list[str]] = {
    "storage/": [
        "tests/test_storage.py",
        "tests/test_reliability_store.py",
        "tests/test_zip_reliability.py",
        "tests/test_mutation_storage.py",
        "tests/test_mutation_zip.py",
    ],
    # The stores added with the remote-stores issue, each with its own tests.
    "storage/http.py": ["tests/test_http_store.py"],
    "storage/fsspec_store.py": ["tests/test_fsspec_store.py"],
    "storage/sqlite.py": ["tests/test_db_stores.py", "tests/crash/test_crash_points.py"],
    "storage/lmdb.py": ["tests/test_db_stores.py", "tests/crash/test_crash_points.py"],
    "storage/resolve.py": ["tests/test_storage.py", "tests/test_http_store.py",
                           "tests/test_fsspec_store.py", "tests/test_db_stores.py"],
    # tests/test_reliability_store.py is left out for zip.py: with ZipStore's methods
    # trampolined, its threaded array writes crash mutmut 3.8.1's stats collection
    # (SIGSEGV in MutmutCallStack.set, reproducibly).
    "storage/zip.py": [
        "tests/test_storage.py",
        "tests/test_zip_reliability.py",
        "tests/test_mutation_storage.py",
        "tests/test_mutation_zip.py",
    ],
    "metadata/fill_value.py": [
        "tests/test_metadata_v3.py",
        "tests/test_hostile_metadata.py",
        "tests/test_bad_input.py",
        "tests/test_spec_examples.py",
        "tests/test_mutation_fill_value.py",
    ],
    "codecs/v3/sharding.py": [
        "tests/test_sharding_engine.py",
        "tests/test_sharding_builder.py",
        "tests/test_codecs_v3.py",
        "tests/test_mutation_sharding.py",
    ],
    # The indexing tests proper, not the read/write engine's: every engine test reaches
    # the indexers, so each mutant's runs (and its hang timeout) would grow fourfold for
    # tests that check the engine, not the plans.
    "indexing/": [
        "tests/test_indexing.py",
        "tests/test_rectilinear.py",
        "tests/test_mutation_indexing.py",
    ],
}

# mutmut's exit codes of a mutant's test run, as mutmut 3.8 reads them (mutmut.stats).
KILLED = {1, 3}
TIMEOUT = {-24, 24, 152, 255, 36}
SURVIVED = {0}
NO_TESTS = {5, 33}
NOT_CHECKED = {None}


@dataclass
class Result:
    module: str
    seconds: float = 0.0
    counts: dict[str, int] = field(default_factory=dict)
    survivors: list[str] = field(default_factory=list)

    @property
    def total(self) -> int:
        return sum(self.counts.values())

    @property
    def caught(self) -> int:
        return self.counts.get("killed", 0) + self.counts.get("timeout", 0)

    @property
    def score(self) -> float:
        return 100.0 * self.caught / self.total if self.total else 0.0


def load_base_config() -> dict:
    with open(ROOT / "pyproject.toml", "rb") as f:
        project = tomllib.load(f)
    return project


def all_modules(mutmut_config: dict) -> list[str]:
    """The modules (paths under src/zarrkit/) that [tool.mutmut] only_mutate selects."""
    patterns = mutmut_config.get("only_mutate", [f"{PACKAGE}*"])
    found = []
    for path in sorted((ROOT / "src" / "zarrkit").rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if "def " not in path.read_text():  # no function: nothing that mutmut mutates
            continue
        if any(fnmatch.fnmatch(rel, p) for p in patterns):
            found.append(rel[len(PACKAGE):])
    return found


def expand(requested: list[str], known: list[str]) -> list[str]:
    """Module arguments (a file or a directory under src/zarrkit/) as module paths."""
    modules: list[str] = []
    for arg in requested:
        arg = arg.removeprefix(PACKAGE).removeprefix("zarrkit/").strip()
        if not arg:
            continue
        if arg.endswith(".py"):
            if not (ROOT / PACKAGE / arg).is_file():
                sys.exit(f"mutate: no module {PACKAGE}{arg}")
            if arg not in known:
                sys.exit(f"mutate: {PACKAGE}{arg} is not selected by [tool.mutmut] only_mutate "
                         "(or has no function to mutate)")
            chosen = [arg]
        else:
            prefix = arg.rstrip("/") + "/"
            chosen = [m for m in known if m.startswith(prefix)]
            if not chosen:
                sys.exit(f"mutate: no module of [tool.mutmut] only_mutate under {PACKAGE}{prefix}")
        modules += [m for m in chosen if m not in modules]
    return modules


def tests_for(module: str) -> list[str]:
    prefixes = [p for p in TESTS if module == p or (p.endswith("/") and module.startswith(p))]
    if not prefixes:
        sys.exit(f"mutate: no test files are listed for {module} in tools/mutate/run.py TESTS")
    files = [t for t in TESTS[max(prefixes, key=len)] if (ROOT / t).is_file()]
    if not files:
        sys.exit(f"mutate: none of the test files listed for {module} exists")
    return files


def toml_value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        return json.dumps(value)  # a JSON string is a valid TOML basic string
    if isinstance(value, list):
        return "[" + ", ".join(toml_value(v) for v in value) + "]"
    raise TypeError(f"cannot write {value!r} as TOML")


def toml_table(name: str, table: dict) -> str:
    lines = [f"[{name}]"]
    lines += [f"{key} = {toml_value(value)}" for key, value in table.items()]
    return "\n".join(lines) + "\n"


def slug(module: str) -> str:
    return module.removesuffix(".py").replace("/", ".")


def link(path: Path, target: Path) -> None:
    if path.is_symlink() or path.exists():
        if path.is_symlink() and path.resolve() == target.resolve():
            return
        path.unlink()
    path.symlink_to(target)


def prepare(module: str, project: dict, fresh: bool) -> Path:
    """The module's work directory, set up for mutmut."""
    work = CACHE / slug(module)
    if fresh and (work / "mutants").exists():
        shutil.rmtree(work / "mutants")
    work.mkdir(parents=True, exist_ok=True)
    link(work / "src", ROOT / "src")
    link(work / "tests", ROOT / "tests")
    # The tests find the shared fixtures at parents[2] / "shared" of tests/<file>.py: for
    # the copies at <work>/mutants/tests/ that is <work>/shared.
    shared = ROOT.parent / "shared"
    if shared.is_dir():
        link(work / "shared", shared)
    mutmut = dict(project.get("tool", {}).get("mutmut", {}))
    mutmut["source_paths"] = ["src"]
    mutmut["only_mutate"] = [PACKAGE + module]
    mutmut["pytest_add_cli_args_test_selection"] = [PACKAGE + module, *tests_for(module)]
    # The module's own doctests run too, as in `make test`. mutmut passes these arguments
    # to every pytest run, also the per-mutant runs of test ids (a doctest id is only
    # found with --doctest-modules: without it pytest exits 4, which mutmut counts as a
    # kill). The mutated file holds a copy of each function per mutant, docstring
    # included: -k leaves out those copies' doctests, which only repeat the original's.
    mutmut["pytest_add_cli_args"] = [
        *mutmut.get("pytest_add_cli_args", []), "--doctest-modules", "-k", "not __mutmut"]
    pytest_ini = project.get("tool", {}).get("pytest", {}).get("ini_options", {})
    text = (
        f"# Written by tools/mutate/run.py for {PACKAGE}{module}; rewritten every run.\n\n"
        + toml_table("tool.pytest.ini_options", pytest_ini)
        + "\n"
        + toml_table("tool.mutmut", mutmut)
    )
    (work / "pyproject.toml").write_text(text)
    return work


def verdicts(work: Path, module: str) -> dict[str, int | None]:
    meta = work / "mutants" / (PACKAGE + module + ".meta")
    if not meta.is_file():
        return {}
    with open(meta) as f:
        return json.load(f)["exit_code_by_key"]


def category(exit_code: int | None) -> str:
    for name, codes in (("killed", KILLED), ("timeout", TIMEOUT), ("survived", SURVIVED),
                        ("no tests", NO_TESTS), ("not checked", NOT_CHECKED)):
        if exit_code in codes:
            return name
    return "other"


def run_mutmut(work: Path, log, names: list[str], jobs: int, verbose: bool) -> int:
    env = dict(os.environ)
    mutated_src = work / "mutants" / "src"
    # It must exist when the interpreter starts: a missing sys.path directory is cached as
    # "nothing to import there" and stays so after mutmut has filled it.
    mutated_src.mkdir(parents=True, exist_ok=True)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(mutated_src), env.get("PYTHONPATH")) if p)
    env.pop("MUTANT_UNDER_TEST", None)
    mutmut = Path(sys.executable).parent / "mutmut"
    command = [str(mutmut), "run", "--max-children", str(jobs), *names]
    log.write(f"$ {' '.join(command)}\n")
    log.flush()
    if verbose:
        process = subprocess.Popen(command, cwd=work, env=env, stdout=subprocess.PIPE,
                                   stderr=subprocess.STDOUT)
        assert process.stdout is not None
        for chunk in iter(lambda: process.stdout.read1(4096), b""):
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            log.write(chunk.decode(errors="replace"))
        return process.wait()
    return subprocess.call(command, cwd=work, env=env, stdout=log, stderr=subprocess.STDOUT)


def check_test_ids(work: Path, module: str, log) -> None:
    """Collect every test id that mutmut ran for this module's mutants, with the arguments
    mutmut gives them. mutmut counts any failing pytest run as a kill, also one that fails
    because pytest does not find a test id (exit 4): all of them must be found."""
    with open(work / "mutants" / "mutmut-stats.json") as f:
        stats = json.load(f)
    with open(work / "pyproject.toml", "rb") as f:
        extra = tomllib.load(f)["tool"]["mutmut"].get("pytest_add_cli_args", [])
    name = "zarrkit." + module.removesuffix(".py").replace("/", ".") + "."
    ids = sorted({t for function, tests in stats["tests_by_mangled_function_name"].items()
                  if function.startswith(name) for t in tests})
    if not ids:
        return
    command = [sys.executable, "-m", "pytest", "--rootdir=.", "--collect-only", "-q",
               "-p", "no:randomly", *ids, *extra]
    env = dict(os.environ, MUTANT_UNDER_TEST="",
               PYTHONPATH=os.pathsep.join(p for p in (str(work / "mutants" / "src"),
                                                      os.environ.get("PYTHONPATH")) if p))
    log.write(f"$ (check) pytest --collect-only <{len(ids)} test ids of the mutants> "
              f"{' '.join(extra)}\n")
    log.flush()
    out = subprocess.run(command, cwd=work / "mutants", env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.STDOUT, text=True)
    log.write(out.stdout[-2000:])
    found = sum(1 for line in out.stdout.splitlines() if "::" in line)
    if out.returncode != 0 or found != len(ids):
        sys.exit(f"mutate: pytest finds {found} of the {len(ids)} test ids that mutmut ran for "
                 f"{module}'s mutants (exit {out.returncode}), so its kills mean nothing; "
                 f"see {log.name}")


def mutate(module: str, project: dict, args: argparse.Namespace) -> Result:
    work = prepare(module, project, fresh=not args.incremental)
    print(f"== {PACKAGE}{module}: tests {' '.join(tests_for(module))}", flush=True)
    log_path = work / "mutmut.log"
    start = time.monotonic()
    with open(log_path, "w") as log:
        # In an incremental run, earlier survivors are tested again: tests may have changed.
        again = [k for k, v in verdicts(work, module).items()
                 if category(v) in ("survived", "no tests", "other")]
        code = run_mutmut(work, log, [], args.jobs, args.verbose)
        again = [k for k in again if k in verdicts(work, module)]
        if code == 0 and again:
            code = run_mutmut(work, log, again, args.jobs, args.verbose)
        seconds = time.monotonic() - start
        if code != 0:
            tail = log_path.read_text(errors="replace").replace("\r", "\n").splitlines()[-30:]
            print("\n".join(tail))
            sys.exit(f"mutate: mutmut failed for {module} (exit {code}); the log is {log_path}")
        check_test_ids(work, module, log)
    result = tally(Result(module, seconds), work)
    print(f"   {line(result)}", flush=True)
    return result


def tally(result: Result, work: Path) -> Result:
    for key, exit_code in verdicts(work, result.module).items():
        name = category(exit_code)
        result.counts[name] = result.counts.get(name, 0) + 1
        if name in ("survived", "no tests", "other", "not checked"):
            result.survivors.append(f"{key} ({name})")
    return result


def line(r: Result) -> str:
    c = r.counts
    other = c.get("other", 0) + c.get("not checked", 0)
    return (f"{r.module}: {r.caught}/{r.total} killed ({r.score:.1f}%) - "
            f"killed {c.get('killed', 0)}, timeout {c.get('timeout', 0)}, "
            f"survived {c.get('survived', 0)}, no tests {c.get('no tests', 0)}, "
            f"other {other}; {r.seconds:.0f} s")


def report(results: list[Result]) -> str:
    rows = ["| module | killed / total | score | survived | no tests | timeout | time |",
            "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in results:
        c = r.counts
        rows.append(f"| {r.module} | {r.caught} / {r.total} | {r.score:.1f}% | "
                    f"{c.get('survived', 0)} | {c.get('no tests', 0)} | {c.get('timeout', 0)} | "
                    f"{f'{r.seconds:.0f} s' if r.seconds else '-'} |")
    out = ["# Mutation testing (make mutate)", "", *rows, ""]
    for r in results:
        if r.survivors:
            out += [f"Not killed in {r.module} (`cd .mutmut-cache/{slug(r.module)} && "
                    f"{Path(sys.executable).parent / 'mutmut'} show NAME`):", ""]
            out += [f"- {s}" for s in r.survivors] + [""]
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="*", help="module files or directories under src/zarrkit/")
    parser.add_argument("--incremental", action="store_true",
                        help="keep earlier verdicts; re-test only new mutants and survivors")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="mutants tested at once (default: the number of cores)")
    parser.add_argument("--verbose", action="store_true", help="show mutmut's own output")
    parser.add_argument("--report", action="store_true",
                        help="run nothing: report the verdicts of the modules' last runs")
    args = parser.parse_args()
    project = load_base_config()
    known = all_modules(project.get("tool", {}).get("mutmut", {}))
    modules = expand(args.modules, known) if args.modules else known
    if not modules:
        sys.exit("mutate: no module to mutate")
    if args.report:
        results = [tally(Result(m), CACHE / slug(m)) for m in modules
                   if verdicts(CACHE / slug(m), m)]
    else:
        results = [mutate(m, project, args) for m in modules]
    text = report(results)
    CACHE.mkdir(exist_ok=True)
    (CACHE / "report.md").write_text(text)
    print()
    print(text)


if __name__ == "__main__":
    main()
