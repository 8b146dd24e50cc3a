"""The ways of running the site agree with each other and with the code: deploy/supervisord.conf
(`make run`, the container), deploy/entrypoint.sh (the container's roles, the systemd units),
deploy/systemd/, deploy/Dockerfile and the documentation name the same programs, and every
command they run exists. Docker does not run here: the image's files are checked by reading,
the entrypoint by running it with stand-ins for the commands it starts."""

from __future__ import annotations

import ast
import configparser
import importlib.metadata
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from django.conf import settings
from django.core.management import get_commands, load_command_class
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from supervisor.datatypes import RestartUnconditionally
from supervisor.options import ServerOptions

from project.operations.health import HEALTH_PATHS
from project.operations.health_selectors import WORKERS
from project.operations.logs import PROCESS_NAME_WIDTH

ROOT = Path(__file__).resolve().parents[2]
DEPLOY = ROOT / "deploy"
PROGRAMS = ["web", *WORKERS, "clear_sessions"]
BACKGROUND = PROGRAMS[1:]
GUNICORN_GRACEFUL_SECONDS = 20  # config/gunicorn.py's default WEB_GRACEFUL_TIMEOUT
WORKER_STOP_SECONDS = 5  # what a worker promises (project/operations/worker_loop.py)


def supervisord_programs(config: Path, run_dir: Path) -> dict:
    """The programs supervisord itself reads from `config` (its own parser: expansions, types)."""
    environ = dict(os.environ)
    os.environ["RUN_DIR"] = str(run_dir)  # read when the options are made
    try:
        options = ServerOptions()
        options.realize(args=["-c", str(config)])
    finally:
        os.environ.clear()
        os.environ.update(environ)
    [group] = options.process_group_configs
    assert group.name == "site"
    return {program.name: program for program in group.process_configs}


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    return supervisord_programs(DEPLOY / "supervisord.conf", tmp_path_factory.mktemp("run"))


def test_supervisord_runs_gunicorn_and_every_background_worker(programs):
    assert sorted(programs) == sorted(PROGRAMS)
    assert programs["web"].command == "gunicorn -c config/gunicorn.py"
    assert (ROOT / "config/gunicorn.py").is_file()
    assert all(len(name) <= PROCESS_NAME_WIDTH for name in programs)  # the log lines line up


@pytest.mark.parametrize("name", BACKGROUND)
def test_each_background_program_is_a_management_command_with_options_it_takes(programs, name):
    python, manage, command, *arguments = shlex.split(programs[name].command)
    assert (python, manage, command) == ("python", "manage.py", name)
    assert "--loop" in arguments
    parser = load_command_class(get_commands()[command], command).create_parser("manage.py", command)
    parser.parse_args(arguments)  # SystemExit on an option the command does not have


@pytest.mark.parametrize("name", PROGRAMS)
def test_each_program_is_restarted_stopped_as_a_group_and_logs_to_the_shared_output(programs, name):
    program = programs[name]
    assert program.autorestart is RestartUnconditionally
    assert program.autostart
    assert program.startretries >= 10  # a crash loop backs off for a long while before supervisord gives up
    assert program.stopsignal.name == "SIGTERM"
    assert program.stopasgroup and program.killasgroup
    assert program.stopwaitsecs > (GUNICORN_GRACEFUL_SECONDS if name == "web" else WORKER_STOP_SECONDS)
    assert (program.stdout_logfile, program.stdout_logfile_maxbytes, program.redirect_stderr) == (
        "/dev/stdout",
        0,
        True,
    )
    assert Path(program.directory).resolve() == ROOT


# --- deploy/entrypoint.sh, with stand-ins for what it starts ----------------------------------


@pytest.fixture
def entrypoint(tmp_path):
    """Run deploy/entrypoint.sh with `python`, `gunicorn` and `supervisord` replaced by scripts that
    print what they were asked to run; returns (exit status, printed line, error output)."""
    stand_ins = tmp_path / "bin"
    stand_ins.mkdir()
    for name in ("python", "gunicorn", "supervisord"):
        script = stand_ins / name
        script.write_text('#!/bin/sh\necho "$(basename "$0") $*"\n')
        script.chmod(0o755)
    environment = {"PATH": f"{stand_ins}:/usr/bin:/bin", "RUN_DIR": str(tmp_path / "run")}

    def run(*arguments: str, **variables: str) -> tuple[int, str, str]:
        done = subprocess.run(
            [str(DEPLOY / "entrypoint.sh"), *arguments],
            cwd="/",
            env={**environment, **variables},
            capture_output=True,
            text=True,
        )
        return done.returncode, done.stdout.strip(), done.stderr

    return run


def test_the_entrypoint_runs_each_program_alone_as_supervisord_would(entrypoint, programs):
    assert entrypoint("web") == (0, programs["web"].command, "")
    assert entrypoint("web", "--workers", "3") == (0, f"{programs['web'].command} --workers 3", "")
    for name in BACKGROUND:
        assert entrypoint("worker", name) == (0, programs[name].command, ""), name
    assert entrypoint("worker", "fold_like_events", "--poll-seconds", "1")[1].endswith("--loop --poll-seconds 1")


def test_the_entrypoint_refuses_a_worker_it_does_not_know(entrypoint):
    for name in ("web", "nosuch", "../deploy", "fold_like_events]"):
        status, printed, error = entrypoint("worker", name)
        assert (status, printed) == (2, ""), name
        assert " ".join(BACKGROUND) in error
    assert entrypoint("worker")[0] == 2


def test_the_entrypoint_runs_supervisord_for_everything_and_a_management_command_otherwise(entrypoint):
    assert entrypoint() == (0, "supervisord -c deploy/supervisord.conf", "")
    assert entrypoint("all") == (0, "supervisord -c deploy/supervisord.conf", "")
    assert entrypoint("migrate", "--no-input") == (0, "python manage.py migrate --no-input", "")
    assert entrypoint("create_tables") == (0, "python manage.py create_tables", "")


def test_the_workers_role_is_supervisord_with_every_program_but_web(entrypoint, tmp_path):
    status, printed, _ = entrypoint("workers")
    config = tmp_path / "run" / "supervisord.workers.conf"
    assert (status, printed) == (0, f"supervisord -c {config}")
    workers = supervisord_programs(config, tmp_path / "run")
    assert sorted(workers) == sorted(BACKGROUND)
    assert all(Path(program.directory).resolve() == ROOT for program in workers.values())


def test_with_the_images_proxy_all_and_web_run_nginx_in_front_of_gunicorn(entrypoint, tmp_path, monkeypatch):
    """BUFFERING_PROXY=nginx: nginx listens where gunicorn would (HOST:PORT) and gunicorn moves
    behind it; `all` runs every program and the proxy under supervisord, `web` the two."""
    run = tmp_path / "run"
    for role, expected in (("all", PROGRAMS), ("web", ["web"])):
        status, printed, _ = entrypoint(role, BUFFERING_PROXY="nginx", HOST="0.0.0.0", PORT="8000")
        config = run / f"supervisord.{role}.conf"
        assert (status, printed) == (0, f"supervisord -c {config}"), role
        monkeypatch.setenv("NGINX_CONF", str(run / "nginx.conf"))
        served = supervisord_programs(config, run)
        assert sorted(served) == sorted([*expected, "proxy"]), role
        assert served["proxy"].command.startswith(f"nginx -c {run / 'nginx.conf'} ")
        assert served["web"].command == "gunicorn -c config/gunicorn.py"
        assert Path(served["web"].directory).resolve() == ROOT
    nginx = (run / "nginx.conf").read_text()
    assert "listen 0.0.0.0:8000;" in nginx and "server 127.0.0.1:8001;" in nginx and not re.search(r"@[A-Z_]+@", nginx)
    for directive in ("proxy_request_buffering on;", "proxy_buffering on;", "client_body_timeout 10s;"):
        assert directive in nginx
    assert entrypoint("web", BUFFERING_PROXY="alb") == (0, "gunicorn -c config/gunicorn.py", "")


def test_the_image_runs_its_nginx_in_front_of_gunicorn():
    runs = " ; ".join(argument for kind, argument in dockerfile() if kind == "RUN")
    assert "apt-get install -y --no-install-recommends nginx" in runs
    environment = " ".join(argument for kind, argument in dockerfile() if kind == "ENV")
    assert re.search(r"\bBUFFERING_PROXY=nginx\b", environment) and re.search(r"\bNUM_PROXIES=1\b", environment)


# --- deploy/systemd/ --------------------------------------------------------------------------


class UnitFile(configparser.RawConfigParser):
    def optionxform(self, optionstr: str) -> str:
        return optionstr  # systemd's keys are case-sensitive


def unit(name: str) -> UnitFile:
    parser = UnitFile(strict=False, interpolation=None)
    parser.read(DEPLOY / "systemd" / name)
    return parser


UNITS = {"dynamo-social-web.service": ["web"], "dynamo-social-worker@.service": ["worker", "%i"]}


@pytest.mark.parametrize("name", UNITS)
def test_each_systemd_unit_starts_its_role_through_the_entrypoint_and_is_always_restarted(name, programs):
    service = unit(name)["Service"]
    executable, *arguments = shlex.split(service["ExecStart"])
    assert executable == f"{service['WorkingDirectory']}/deploy/entrypoint.sh"
    assert os.access(DEPLOY / "entrypoint.sh", os.X_OK)
    assert arguments == UNITS[name]
    assert service["Restart"] == "always" and float(service["RestartSec"]) <= 1
    assert unit(name)["Unit"]["StartLimitIntervalSec"] == "0"  # never gives up
    assert service["KillMode"] == "mixed" and service["KillSignal"] == "SIGTERM"
    # As long as supervisord waits, and longer than the program needs.
    waits = programs["web"].stopwaitsecs if name.endswith("web.service") else programs["fold_like_events"].stopwaitsecs
    assert int(service["TimeoutStopSec"]) == waits
    assert service["EnvironmentFile"].startswith("/")
    assert service["User"] not in ("", "root")
    assert service["Environment"].startswith(f"PATH={service['WorkingDirectory']}/.venv/bin:")


@pytest.mark.skipif(not shutil.which("systemd-analyze"), reason="systemd-analyze is not installed")
def test_systemd_accepts_the_units(tmp_path):
    """`systemd-analyze verify` on copies pointing at this checkout instead of /opt/dynamo-social."""
    for path in (DEPLOY / "systemd").glob("*.service"):
        text = path.read_text().replace("/opt/dynamo-social", str(ROOT))
        (tmp_path / path.name).write_text(text)
    units = [tmp_path / "dynamo-social-web.service", tmp_path / "dynamo-social-worker@fold_like_events.service"]
    done = subprocess.run(["systemd-analyze", "verify", *map(str, units)], capture_output=True, text=True)
    # systemd before 254 does not know the back-off settings, and says it ignores them.
    problems = [
        line
        for line in done.stderr.splitlines()
        if line and not re.search(r"Unknown key '(RestartSteps|RestartMaxDelaySec)'", line)
    ]
    assert done.returncode == 0 and not problems, done.stderr


def test_the_worker_list_is_the_same_in_the_docs_and_the_worker_unit():
    """The systemd instances an operator enables are exactly the background programs."""
    enable = re.compile(r"systemctl enable --now((?:\s+\\?\s*dynamo-social-[\w@-]+)+)")
    for text in (
        (ROOT / "docs" / "how-to" / "run-in-production.md").read_text(),
        (DEPLOY / "systemd" / "dynamo-social-worker@.service").read_text(),
    ):
        commands = [match.group(1) for match in enable.finditer(text.replace("#", ""))]
        assert commands, "no `systemctl enable --now ...` found"
        instances = re.findall(r"dynamo-social-worker@(\w+)", " ".join(commands))
        assert sorted(instances) == sorted(BACKGROUND)


# --- deploy/Dockerfile --------------------------------------------------------------------------


def dockerfile() -> list[tuple[str, str]]:
    """The instructions, continuation lines joined, comments left out."""
    text = re.sub(r"\\\n\s*", " ", (DEPLOY / "Dockerfile").read_text())
    lines = [line.strip() for line in text.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return [(line.split(None, 1)[0].upper(), line.split(None, 1)[1]) for line in lines]


def ignored() -> list[str]:
    lines = (ROOT / ".dockerignore").read_text().splitlines()
    return [line.strip().removeprefix("**/") for line in lines if line.strip() and not line.startswith("#")]


def test_the_image_is_built_from_python_311_slim_and_runs_as_a_user_of_its_own():
    instructions = dockerfile()
    assert instructions[0] == ("FROM", "python:3.11-slim")
    users = [argument for kind, argument in instructions if kind == "USER"]
    assert users and users[-1] not in ("root", "0")
    assert any(kind == "RUN" and "useradd" in argument and users[-1] in argument for kind, argument in instructions)


def test_the_image_installs_the_runtime_packages_and_collects_the_static_files():
    runs = " ; ".join(argument for kind, argument in dockerfile() if kind == "RUN")
    assert "pip install -r requirements-runtime.txt" in runs
    assert "manage.py collectstatic --no-input" in runs
    for kind, argument in dockerfile():
        if kind == "COPY":
            *sources, _ = argument.split()
            for source in sources:
                assert (ROOT / source).exists(), source
                assert source == "." or source not in ignored(), source


def test_the_image_keeps_what_the_site_needs_and_leaves_out_secrets_and_local_state():
    left_out = ignored()
    for secret_or_state in (".env", ".venv", "var", "node_modules", ".git", "staticfiles"):
        assert secret_or_state in left_out
    local_apps = {app.split(".")[0] for app in settings.INSTALLED_APPS if (ROOT / app.split(".")[0]).is_dir()}
    for needed in ("manage.py", "config/gunicorn.py", "deploy", "requirements-runtime.txt", *local_apps):
        assert needed not in left_out and (ROOT / needed).exists(), needed


def test_the_image_serves_on_its_exposed_port_and_checks_health_on_a_health_path():
    instructions = dockerfile()
    environment = " ".join(argument for kind, argument in instructions if kind == "ENV")
    port = re.search(r"\bPORT=(\d+)", environment).group(1)
    assert ("EXPOSE", port) in instructions
    assert re.search(r"\bHOST=0\.0\.0\.0\b", environment)  # reachable from outside the container
    [check] = [argument for kind, argument in instructions if kind == "HEALTHCHECK"]
    path = re.search(r"http://127\.0\.0\.1:%s(/\w+)", check).group(1)
    assert path in HEALTH_PATHS
    assert "'PORT', '" + port + "'" in check


def test_the_image_starts_through_the_entrypoint_with_every_program_by_default():
    instructions = dict(dockerfile())
    assert instructions["ENTRYPOINT"] == '["deploy/entrypoint.sh"]'
    assert instructions["CMD"] == '["all"]'
    assert os.access(DEPLOY / "entrypoint.sh", os.X_OK)
    assert (ROOT / instructions["WORKDIR"].removeprefix("/app").lstrip("/") / "deploy" / "entrypoint.sh").is_file()


# --- requirements-runtime.txt: what the container installs ----------------------------------------

# The site's own modules that the image's processes load: the site as gunicorn loads it (every
# URL's view, the database backend), each program's command and the commands run on a deployment.
LOADED_MODULES = """
import json, os, sys
import django
django.setup()
from django.core.management import get_commands, load_command_class
from django.db import connections
from django.urls import get_resolver
import config.wsgi
connections["default"]
get_resolver().url_patterns
for name in sys.argv[1:]:
    load_command_class(get_commands()[name], name)
print(json.dumps(sorted({getattr(module, "__file__", None) or "" for module in list(sys.modules.values())})))
"""


def imported_at_run_time(path: Path) -> set[str]:
    """The top-level modules a source file imports (for type checkers only, under TYPE_CHECKING, aside)."""
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            return
        if isinstance(node, ast.Import):
            found.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            found.add(node.module.split(".")[0])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(path.read_text()))
    return found


def runtime_closure() -> set[str]:
    """The distributions `pip install -r requirements-runtime.txt` installs: the pinned ones and
    everything they require (with the extras asked for), as installed here."""
    wanted = []
    for line in (ROOT / "requirements-runtime.txt").read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            wanted.append(Requirement(line))
    found: set[str] = set()
    while wanted:
        requirement = wanted.pop()
        name = canonicalize_name(requirement.name)
        if name in found:
            continue
        found.add(name)
        try:
            requires = importlib.metadata.distribution(requirement.name).requires or []
        except importlib.metadata.PackageNotFoundError:
            continue
        for text in requires:
            needed = Requirement(text)
            extras = requirement.extras or {""}
            if needed.marker is None or any(needed.marker.evaluate({"extra": extra}) for extra in extras):
                wanted.append(needed)
    return found


def test_the_runtime_requirements_hold_every_package_the_images_processes_import():
    commands = [*BACKGROUND, "migrate", "create_tables", "activity_tables", "health", "collectstatic"]
    done = subprocess.run(
        [sys.executable, "-c", LOADED_MODULES, *commands],
        cwd=ROOT,
        env={
            **os.environ,
            "ENV_FILE": "/dev/null",
            "DJANGO_SETTINGS_MODULE": "config.settings",
            "SECRET_KEY": "requirements-test-" + "x" * 40,
            "DATABASE_URL": "postgres://site@127.0.0.1:5432/site",  # the backend is loaded, never connected
        },
        capture_output=True,
        text=True,
        check=True,
    )
    apps = {"actions", "config", "delivery", "notifications", "project", "social"}
    loaded = [
        Path(file)
        for file in json.loads(done.stdout)
        if file.endswith(".py") and Path(file).is_relative_to(ROOT) and Path(file).relative_to(ROOT).parts[0] in apps
    ]
    assert ROOT / "config" / "wsgi.py" in loaded
    modules = {"gunicorn", "supervisor"}  # started by name
    for path in {*loaded, ROOT / "config/gunicorn.py"}:
        modules |= imported_at_run_time(path)
    local = {path.name.removesuffix(".py") for path in ROOT.iterdir()}
    to_distributions = importlib.metadata.packages_distributions()
    imported = {
        canonicalize_name(distribution)
        for module in modules - local - set(sys.stdlib_module_names)
        for distribution in to_distributions.get(module, [module])
    }
    missing = imported - runtime_closure()
    assert imported and not missing, f"imported by the site, not installed by requirements-runtime.txt: {missing}"
    assert "-r requirements-runtime.txt" in (ROOT / "requirements.txt").read_text()
