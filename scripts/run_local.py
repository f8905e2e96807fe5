"""`make run`: the whole system on one machine, from nothing configured.

Finds PostgreSQL and Redis (DATABASE_URL / REDIS_URL, else the local defaults; an embedded
PostgreSQL from the `pgserver` package when none is reachable), creates the database if it
is missing, migrates, makes sure a local admin, an ingest token and a read token exist, then
runs the web server, a Celery worker and the scheduler together until Ctrl-C, which stops all
three. It says in one line what each step is doing, not the tools' own output.

The local admin password and the tokens are kept in .local/credentials.json (git-ignored) so
that every run prints working credentials without resetting them.
"""

import atexit
import json
import os
import secrets
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
# make run's state (credentials, the scheduler's file); the supervision tests point
# MAKE_RUN_DIR at a folder of their own so that they leave a developer's .local alone.
LOCAL = Path(os.environ.get("MAKE_RUN_DIR") or ROOT / ".local")
CREDENTIALS = LOCAL / "credentials.json"
BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lineage_catalog"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"


def say(message: str) -> None:
    print(f"[make run] {message}", flush=True)


def database_url() -> str:
    import psycopg

    url = os.environ.get("DATABASE_URL", DEFAULT_DATABASE_URL)
    parts = urlsplit(url)
    database = parts.path.lstrip("/") or "lineage_catalog"
    maintenance = urlunsplit(parts._replace(path="/postgres"))
    try:
        with psycopg.connect(maintenance, autocommit=True, connect_timeout=3) as connection:
            exists = connection.execute(
                "SELECT 1 FROM pg_database WHERE datname = %s", [database]
            ).fetchone()
            if not exists:
                say(f"creating database {database!r}")
                connection.execute(f'CREATE DATABASE "{database}"')
        return url
    except psycopg.OperationalError as error:
        if "DATABASE_URL" in os.environ:
            sys.exit(f"[make run] DATABASE_URL is set but PostgreSQL is not reachable: {error}")
        return embedded_database_url(database)


_embedded_server = None  # kept referenced: pgserver stops the server when it is collected


def embedded_database_url(database: str) -> str:
    """An embedded PostgreSQL (the pgserver package) in .local/pgdata, stopped on exit."""
    global _embedded_server
    say("no PostgreSQL on 127.0.0.1:5432; starting an embedded one (pgserver)")
    # From the lock like everything else (the `embedded` extra), with the uv `make` installed.
    subprocess.run(
        [ROOT / ".uv" / "bin" / "uv", "sync", "--frozen", "--inexact", "--extra", "embedded", "-q"],
        cwd=ROOT,
        check=True,
    )
    import pgserver  # type: ignore[import-not-found]

    _embedded_server = pgserver.get_server(LOCAL / "pgdata")
    if database not in _embedded_server.psql("SELECT datname FROM pg_database;"):
        _embedded_server.psql(f'CREATE DATABASE "{database}";')
    return str(_embedded_server.get_uri(database))


def redis_url() -> str:
    import redis

    url = os.environ.get("REDIS_URL", DEFAULT_REDIS_URL)
    try:
        redis.Redis.from_url(url, socket_connect_timeout=2).ping()
    except redis.RedisError as error:
        say(
            f"warning: Redis at {url} is not reachable ({error}); ingest still works, "
            "derivation waits for Redis"
        )
    return url


def manage(*args: str, env: dict[str, str], capture: bool = False) -> str:
    result = subprocess.run(
        [BIN / "python", "manage.py", *args],
        cwd=ROOT,
        env=env,
        check=True,
        capture_output=capture,
        text=True,
    )
    return result.stdout if capture else ""


# Run inside `manage.py shell` with the saved credentials as JSON on stdin: migrates when
# asked, makes sure the admin has the saved password and that each saved token is still
# active with its scope (a new one otherwise), and prints the credentials as JSON. One
# Django start instead of five: on a busy laptop each costs seconds of `make run`.
_PREPARE_SCRIPT = """
import json, sys
from django.contrib.auth import get_user_model
from django.core.management import call_command
from ingest.models import ApiToken
from ingest.services import create_token, hash_token

saved = json.loads(sys.stdin.read())
if saved.pop("migrate"):
    call_command("migrate", interactive=False, verbosity=0)
user, _ = get_user_model().objects.get_or_create(username="admin")
user.is_staff = user.is_superuser = True
user.set_password(saved["admin_password"])
user.save()
for scope in ("ingest", "read"):
    secret = saved.get(scope + "_token") or ""
    if not ApiToken.objects.active().filter(key_hash=hash_token(secret), scope=scope).exists():
        saved[scope + "_token"] = create_token("make run (" + scope + ")", scope)[1]
print(json.dumps(saved))
"""


def ensure_credentials(env: dict[str, str], migrate: bool = False) -> dict[str, str]:
    """The local admin login, an ingest token and a read token, kept in
    .local/credentials.json so every run prints the same working ones; ``migrate`` applies
    the migrations first, in the same Django process."""
    LOCAL.mkdir(exist_ok=True)
    saved = json.loads(CREDENTIALS.read_text()) if CREDENTIALS.exists() else {}
    saved: dict[str, str | bool] = {
        "admin_user": "admin",
        "admin_password": saved.get("admin_password") or secrets.token_urlsafe(12),
        "ingest_token": saved.get("ingest_token", ""),
        "read_token": saved.get("read_token", ""),
    }
    result = subprocess.run(
        [BIN / "python", "manage.py", "shell", "-c", _PREPARE_SCRIPT],
        cwd=ROOT,
        env=env,
        check=True,
        input=json.dumps({**saved, "migrate": migrate}),
        capture_output=True,
        text=True,
    )
    credentials: dict[str, str] = json.loads(result.stdout.strip().splitlines()[-1])
    CREDENTIALS.write_text(json.dumps(credentials, indent=2))
    CREDENTIALS.chmod(0o600)
    return credentials


def banner(url: str, credentials: dict[str, str]) -> str:
    """What `make run` prints once everything is started: where to go and how to log in."""
    ingest, read = credentials["ingest_token"], credentials["read_token"]
    return (
        "\n"
        f"  Lineage Catalog is running. Start here: {url}/\n"
        f"  Admin:        {url}/admin/  user 'admin'  password {credentials['admin_password']}\n"
        f"  API docs:     {url}/api/docs/\n"
        f"  Ingest token: {ingest}\n"
        f"  Read token:   {read}\n"
        f"  Send:         curl -H 'Authorization: Bearer {ingest}' "
        f"-H 'Content-Type: application/json' -d @examples/event.json {url}/api/v1/lineage\n"
        f"  Read:         curl -H 'Authorization: Bearer {read}' {url}/api/v1/jobs\n"
        "  Credentials are kept in .local/credentials.json; "
        "docs/producers.md has each producer's recipe.\n"
        "  Ctrl-C stops the web server, the worker and the scheduler.\n"
    )


def celery_command(program: str, *options: str) -> list[str]:
    """Celery's ``program`` (``worker``, ``beat``) for the project's app, logging at INFO.
    The fault tests start their worker and scheduler with it too."""
    return [str(BIN / "celery"), "-A", "config", program, "--loglevel", "INFO", *options]


def web_command() -> list[str]:
    """The web server as shipped (granian, config/server.py); ``web_environment`` sets it up
    for development. The fault tests start theirs with it too."""
    return [str(BIN / "python"), "-m", "config.server"]


def web_environment(environ: dict[str, str]) -> dict[str, str]:
    """The development web server's settings. It runs with DEBUG on, a fixed SECRET_KEY and
    any Host accepted, so it listens on this machine only unless ``HOST`` says otherwise
    (``HOST=0.0.0.0 make run`` to reach it from elsewhere, knowingly); it logs every request
    and restarts when the code changes."""
    return {
        "HOST": environ.get("HOST") or "127.0.0.1",
        "PORT": environ.get("PORT") or "8000",
        # One process: each one imports the whole application again when it (re)starts,
        # which is most of what a second `make run` waits for on a laptop.
        "WEB_WORKERS": "1",
        "WEB_THREADS": "4",
        "WEB_ACCESS_LOG": "true",
        "WEB_RELOAD": "true",
    }


# --- supervision ---------------------------------------------------------------------------
# Like a process supervisor (Kubernetes restarts pods): a process that dies is started again;
# one that keeps dying (5 times in a minute) stops the whole system. Nothing started here
# outlives the supervisor: Ctrl-C or SIGTERM stops every process, and each is started with
# a parent-death signal, so a supervisor that is SIGKILLed takes them with it too.

RESTARTS_PER_MINUTE = 5
STOP_SECONDS = 10
PR_SET_PDEATHSIG = 1  # <linux/prctl.h>


def _die_with_the_supervisor(supervisor: int) -> Callable[[], None]:
    """What a child runs between fork and exec: SIGTERM it when the supervisor ends.

    SIGTERM's handler is set back to the default first: a SIGTERM that came before the exec
    would otherwise reach the supervisor's own handler, copied into the child, and be lost.
    A supervisor that ended before the request is seen by the parent id changing. libc is
    loaded here, in the supervisor: the child only calls into it."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True) if sys.platform == "linux" else None

    def in_child() -> None:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        if libc is not None:
            libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
        if os.getppid() != supervisor:
            os._exit(1)

    return in_child


def start(command: list[str], environment: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start one of make run's processes (web, worker, scheduler)."""
    return subprocess.Popen(
        command, cwd=ROOT, env=environment, preexec_fn=_die_with_the_supervisor(os.getpid())
    )


def stop(processes: dict[str, subprocess.Popen[bytes]]) -> None:
    """SIGTERM every process, then SIGKILL those still running after STOP_SECONDS."""
    for process in processes.values():
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
    deadline = time.monotonic() + STOP_SECONDS
    for process in processes.values():
        try:
            process.wait(timeout=max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def supervise(
    processes: dict[str, subprocess.Popen[bytes]],
    commands: dict[str, tuple[list[str], dict[str, str]]],
) -> None:
    """Restart what exits, until Ctrl-C or SIGTERM (then stop everything and exit)."""

    def stop_and_exit(*_: object) -> None:
        stop(processes)
        sys.exit(0)

    signal.signal(signal.SIGINT, stop_and_exit)
    signal.signal(signal.SIGTERM, stop_and_exit)
    restarts: list[float] = []
    while True:
        for name, process in processes.items():
            if process.poll() is None:
                continue
            now = time.monotonic()
            restarts = [moment for moment in restarts if now - moment < 60] + [now]
            if len(restarts) > RESTARTS_PER_MINUTE:
                say(f"{name} keeps exiting (last code {process.returncode}); stopping")
                stop_and_exit()
            say(f"{name} exited with {process.returncode}; starting it again")
            processes[name] = start(*commands[name])
        time.sleep(1)


def kafka_commands(env: dict[str, str]) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The Kafka consumer, when LINEAGE_KAFKA_BOOTSTRAP_SERVERS is set. ``mock`` starts
    librdkafka's mock cluster first (local use only: in memory, gone when make run stops)
    and gives the consumer its address; topics default to ``openlineage`` and ``metadata``."""
    servers = env.get("LINEAGE_KAFKA_BOOTSTRAP_SERVERS", "")
    if not servers:
        return {}
    if servers == "mock":
        env.setdefault("LINEAGE_KAFKA_TOPICS", "openlineage,metadata:metadata")
        topics = [item.split(":")[0] for item in env["LINEAGE_KAFKA_TOPICS"].split(",")]
        command = [str(BIN / "python"), "-m", "ingest.kafka.mock"]
        for topic in topics:
            command += ["--topic", topic.strip()]
        mock = subprocess.Popen(
            command,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            text=True,
            preexec_fn=_die_with_the_supervisor(os.getpid()),
        )
        atexit.register(mock.terminate)
        line = mock.stdout.readline() if mock.stdout else ""
        if not line.startswith("bootstrap="):
            sys.exit("[make run] the Kafka mock cluster did not start")
        env["LINEAGE_KAFKA_BOOTSTRAP_SERVERS"] = line.strip().split("=", 1)[1]
        say(
            f"Kafka mock cluster (local use only) at {env['LINEAGE_KAFKA_BOOTSTRAP_SERVERS']}, "
            f"topics {env['LINEAGE_KAFKA_TOPICS']}"
        )
    return {"consumer": ([str(BIN / "python"), "manage.py", "consume_kafka"], env)}


def main() -> None:
    port = os.environ.get("PORT") or "8000"
    env = dict(os.environ)
    env.setdefault("DJANGO_SETTINGS_MODULE", "config.settings.development")
    env["DATABASE_URL"] = database_url()
    env["REDIS_URL"] = redis_url()
    if env["DJANGO_SETTINGS_MODULE"] == "config.settings.development":
        # DEBUG: whitenoise serves the apps' static files where they are (its finders);
        # the empty folder only spares its "No directory" warning.
        (ROOT / "staticfiles").mkdir(exist_ok=True)
    else:
        say("collecting static files")
        manage("collectstatic", "--no-input", "--verbosity", "0", env=env)
    say("migrating the database; making sure the local admin and two tokens exist")
    credentials = ensure_credentials(env, migrate=True)
    say("starting the web server, a Celery worker and the scheduler")

    commands = {
        "web": (web_command(), {**env, **web_environment(env)}),
        "worker": (celery_command("worker", "--concurrency", "2"), env),
        "scheduler": (
            celery_command("beat", "--schedule", str(LOCAL / "celerybeat-schedule")),
            env,
        ),
        **kafka_commands(env),
    }
    processes = {name: start(*command) for name, command in commands.items()}
    host = env.get("HOST") or "127.0.0.1"
    if host not in ("127.0.0.1", "localhost", "::1"):
        say(
            f"listening on {host} with DEBUG on: anyone who can reach this machine can use it; "
            "set DJANGO_ALLOWED_HOSTS to the names it is reached by"
        )
    url = f"http://127.0.0.1:{port}"
    time.sleep(2)
    print(banner(url, credentials), flush=True)

    supervise(processes, commands)


if __name__ == "__main__":
    main()
