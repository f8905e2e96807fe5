"""`make run`: the whole system on one machine, from nothing configured.

Finds PostgreSQL and Redis (DATABASE_URL / REDIS_URL, else the local defaults; an embedded
PostgreSQL from the `pgserver` package when none it can log in to is reachable), creates the
database if it is missing, migrates, makes sure a local admin, an ingest token and a read
token exist, then runs the web server, a Celery worker and the scheduler (and the Kafka
consumer when LINEAGE_KAFKA_BOOTSTRAP_SERVERS is set) together until Ctrl-C, which stops them
all. It says in one line what each step is doing, not the tools' own output.

Every port it opens listens on HOST (127.0.0.1 unless told) and follows PORT: the web server
on PORT, the consumer's probes on the first free port after it (LINEAGE_CONSUMER_PORT
chooses another). A port another program holds gets one line naming it and the setting that
moves it, and a process that cannot start never stops those that did.

The admin login is created once, by the first run; its password and the tokens are kept in
.local/credentials.json (git-ignored). Later runs print the password while it is still the
one created and never change it: a password changed in the admin is the person's.
"""

import atexit
import errno
import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parent.parent
# make run's state (credentials, the scheduler's file); the supervision tests point
# MAKE_RUN_DIR at a folder of their own so that they leave a developer's .local alone.
LOCAL = Path(os.environ.get("MAKE_RUN_DIR") or ROOT / ".local")
CREDENTIALS = LOCAL / "credentials.json"
BIN = Path(sys.executable).parent
DEFAULT_DATABASE_URL = "postgres://postgres@127.0.0.1:5432/lineage_catalog"
DEFAULT_REDIS_URL = "redis://127.0.0.1:6379/0"
# sysexits.h's EX_CONFIG: config/server.py and consume_kafka exit with it when their port is
# taken. Starting such a process again would fail the same way: it is not restarted.
CANNOT_START = 78


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
        host, port = parts.hostname or "127.0.0.1", parts.port or 5432
        where = f"{host}:{port}"
        if _listening(host, port):
            # A server that answers but refuses the login (a password asked of `postgres`, as
            # a distribution's PostgreSQL does over TCP) is not "no PostgreSQL": say which.
            refusal = str(error).strip().splitlines()[-1][:200]
            why = f"PostgreSQL on {where} refused the login as {parts.username} ({refusal})"
            return embedded_database_url(database, f"{why}; set DATABASE_URL to use it")
        return embedded_database_url(database, f"no PostgreSQL on {where}")


def _listening(host: str, port: int) -> bool:
    """Whether anything accepts a TCP connection there (libpq's errors are localised)."""
    try:
        with socket.create_connection((host, port), timeout=2):
            return True
    except OSError:
        return False


_embedded_server = None  # kept referenced: pgserver stops the server when it is collected


def embedded_database_url(database: str, why: str) -> str:
    """An embedded PostgreSQL (the pgserver package) in .local/pgdata, stopped on exit;
    ``why`` says what was found instead."""
    global _embedded_server
    say(f"{why}; starting an embedded one (pgserver)")
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
# asked, creates the admin login once (never touching it afterwards: its password, its
# flags and its sessions are the person's), says whether the saved password is still its
# password, makes sure each saved token is still active with its scope (a new one
# otherwise), and prints the credentials as JSON. One Django start instead of five: on a
# busy laptop each costs seconds of `make run`.
_PREPARE_SCRIPT = """
import json, secrets, sys
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import check_password
from django.core.management import call_command
from ingest.models import ApiToken
from ingest.services import create_token, hash_token

saved = json.loads(sys.stdin.read())
if saved.pop("migrate"):
    call_command("migrate", interactive=False, verbosity=0)
user = get_user_model().objects.filter(username="admin").first()
if user is None:
    password = saved["admin_password"] or secrets.token_urlsafe(12)
    user = get_user_model().objects.create_superuser("admin", "", password)
    saved.update(admin_password=password, admin_login="created")
elif saved["admin_password"] and (
    user.password == saved["admin_password_hash"]
    # The hash alone changes when Django rehashes a password at login (a new iteration
    # count); comparing the hash first spares the second of hashing on every run.
    # hashers.check_password, not user.check_password: that one may save a new hash.
    or check_password(saved["admin_password"], user.password)
):
    saved["admin_login"] = "created"
else:  # changed since make run created it, or there before this credentials file
    changed = saved["admin_login"] in ("created", "changed")
    saved.update(admin_password="", admin_login="changed" if changed else "existing")
saved["admin_password_hash"] = user.password if saved["admin_password"] else ""
saved["admin_since"] = user.date_joined.date().isoformat()
for scope in ("ingest", "read"):
    secret = saved.get(scope + "_token") or ""
    if not ApiToken.objects.active().filter(key_hash=hash_token(secret), scope=scope).exists():
        saved[scope + "_token"] = create_token("make run (" + scope + ")", scope)[1]
print(json.dumps(saved))
"""


def ensure_credentials(env: dict[str, str], migrate: bool = False) -> dict[str, str]:
    """The local admin login, an ingest token and a read token, kept in
    .local/credentials.json so every run prints the same working ones; ``migrate`` applies
    the migrations first, in the same Django process.

    ``admin_login`` says what the admin's password is: ``created`` (by make run, still
    ``admin_password``), ``changed`` (by someone since: not shown, and never reset) or
    ``existing`` (the user was there before this file: make run does not know it)."""
    LOCAL.mkdir(exist_ok=True)
    kept = kept_credentials()
    saved: dict[str, str | bool] = {
        "admin_user": "admin",
        "admin_password": kept.get("admin_password", ""),
        "admin_password_hash": kept.get("admin_password_hash", ""),
        # Files written before admin_login was kept held the password make run had set.
        "admin_login": kept.get("admin_login", "created" if kept.get("admin_password") else ""),
        "ingest_token": kept.get("ingest_token", ""),
        "read_token": kept.get("read_token", ""),
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
    write_private(CREDENTIALS, json.dumps(credentials, indent=2))
    return credentials


def kept_credentials() -> dict[str, Any]:
    """What .local/credentials.json holds. A file that is not a JSON object (cut short by a
    full disk, edited by hand) is set aside as ``credentials.json.unreadable``, said in one
    line, and the run goes on with new tokens: ensure_credentials then finds the admin login
    there already and says its password is not known here."""
    if not CREDENTIALS.exists():
        return {}
    try:
        kept = json.loads(CREDENTIALS.read_text())
        if isinstance(kept, dict):
            return kept
        why = "not a JSON object"
    except (UnicodeDecodeError, ValueError) as error:
        why = str(error)
    aside = CREDENTIALS.with_name(CREDENTIALS.name + ".unreadable")
    CREDENTIALS.replace(aside)
    say(f"{CREDENTIALS} could not be read ({why}): set aside as {aside.name}; new tokens follow")
    return {}


def write_private(path: Path, text: str) -> None:
    """``text`` into ``path``, readable by this user only from its first byte, and whole or
    not at all (written beside it, then renamed over it): a run killed while writing leaves
    the previous file, not half of one."""
    temporary = path.with_name(path.name + ".new")
    temporary.unlink(missing_ok=True)
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(descriptor, "w") as output:
        output.write(text)
    os.replace(temporary, path)


def admin_login(credentials: dict[str, str]) -> str:
    """The banner's words for the admin login: its password only while it is the one make
    run created."""
    since = credentials.get("admin_since", "")
    if credentials.get("admin_login") == "created":
        return f"user 'admin'  password {credentials['admin_password']}"
    if credentials.get("admin_login") == "changed":
        return (
            f"user 'admin' (created by make run on {since}; its password was changed since, "
            "so it is not shown: `.venv/bin/python manage.py changepassword admin` sets another)"
        )
    return (
        f"user 'admin' (there since {since}, not created by make run, which does not know "
        "its password: `.venv/bin/python manage.py changepassword admin` sets one)"
    )


def banner(url: str, credentials: dict[str, str]) -> str:
    """What `make run` prints once everything is started: where to go and how to log in."""
    ingest, read = credentials["ingest_token"], credentials["read_token"]
    return (
        "\n"
        f"  Lineage Catalog is running. Start here: {url}/\n"
        f"  Admin:        {url}/admin/  {admin_login(credentials)}\n"
        f"  API docs:     {url}/api/docs/\n"
        f"  Ingest token: {ingest}\n"
        f"  Read token:   {read}\n"
        f"  Send:         curl -H 'Authorization: Bearer {ingest}' "
        f"-H 'Content-Type: application/json' -d @examples/event.json {url}/api/v1/lineage\n"
        f"  Read:         curl -H 'Authorization: Bearer {read}' {url}/api/v1/jobs\n"
        "  Credentials are kept in .local/credentials.json; "
        "docs/producers.md has each producer's recipe.\n"
        "  Ctrl-C stops everything make run started.\n"
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


# --- ports ---------------------------------------------------------------------------------
# Everything make run opens listens on HOST and follows PORT, so that two `make run`s (or a
# `make run` beside anything else) never fight over a port nobody chose.

CONSUMER_PORT_TRIES = 100


def port_taken(host: str, port: int) -> bool:
    """Whether another program listens on ``port`` at ``host`` (a bind that fails with
    EADDRINUSE; SO_REUSEADDR, as servers bind, so a closing connection does not count)."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:
            return error.errno == errno.EADDRINUSE
    return False


def port_setting(env: dict[str, str], name: str, default: str, lowest: int = 1) -> int:
    """``env[name]`` as a port number; anything else ends make run, before anything
    starts, with one line naming the setting (not a traceback)."""
    value = (env.get(name) or default).strip()
    if not (value.isascii() and value.isdigit() and lowest <= int(value) <= 65535):
        sys.exit(f"[make run] {name}={value!r} is not a port number ({lowest}-65535): set {name}")
    return int(value)


def check_web_port(host: str, port: int) -> None:
    """Before anything starts: a taken PORT, or a HOST this machine cannot listen on, ends
    make run with one line saying so."""
    if port_taken(host, port):
        sys.exit(
            f"[make run] port {port} on {host} is in use by another program: "
            f"set PORT to a free one (PORT={port + 10} make run)"
        )
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((host, port))
        except OSError as error:  # not this machine's address, or no address at all
            sys.exit(
                f"[make run] cannot listen on {host} ({error.strerror or error}): set HOST to "
                "an address of this machine (127.0.0.1, or 0.0.0.0 for every one)"
            )


def consumer_port(env: dict[str, str], host: str, web_port: int) -> int:
    """The consumer's probe port: LINEAGE_CONSUMER_PORT when set (0: none), else the first
    free port after PORT. A taken port is said in one line, and the consumer runs without
    its probes rather than not at all."""
    chosen = env.get("LINEAGE_CONSUMER_PORT", "").strip()
    if chosen:
        port = port_setting(env, "LINEAGE_CONSUMER_PORT", "", lowest=0)
        if port and port_taken(host, port):
            say(
                f"port {port} on {host} (LINEAGE_CONSUMER_PORT) is in use by another program: "
                "the Kafka consumer runs without its /healthz, /readyz and /metrics; set "
                "LINEAGE_CONSUMER_PORT to a free port"
            )
            return 0
        return port
    for port in range(web_port + 1, min(web_port + 1 + CONSUMER_PORT_TRIES, 65536)):
        if not port_taken(host, port):
            if port != web_port + 1:
                say(
                    f"port {web_port + 1} on {host} is in use by another program: the Kafka "
                    f"consumer's /healthz, /readyz and /metrics are on {port} instead "
                    "(LINEAGE_CONSUMER_PORT sets it)"
                )
            return port
    say(
        f"ports {web_port + 1}-{web_port + CONSUMER_PORT_TRIES} on {host} are all in use: the "
        "Kafka consumer runs without its probes; set LINEAGE_CONSUMER_PORT to a free port"
    )
    return 0


# --- supervision ---------------------------------------------------------------------------
# Like a process supervisor (Kubernetes restarts pods): a process that dies is started again;
# one that keeps dying (more than 5 times in a minute), or that says it cannot start as
# configured (exit status CANNOT_START: a taken port), is left stopped, in one line, and the
# others keep running: what started is never stopped by what could not. Nothing started here
# outlives the supervisor: Ctrl-C or SIGTERM stops every process, and each is started with
# a parent-death signal, so a supervisor that is SIGKILLed takes them with it too.

RESTARTS_PER_MINUTE = 5
STOP_SECONDS = 10
POLL_SECONDS = 1.0
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
    restarts: dict[str, list[float]] = {name: [] for name in processes}
    left: set[str] = set()  # stopped for good: they cannot start

    def leave(name: str, why: str) -> None:
        left.add(name)
        running = [other for other in processes if other not in left]
        if not running:
            say(f"{name} {why}; nothing is left running, stopping")
            stop(processes)
            sys.exit(1)
        say(
            f"{name} {why}; not starting it again. Still running: {', '.join(running)} "
            "(Ctrl-C stops them)"
        )

    while True:
        for name, process in list(processes.items()):
            if name in left or process.poll() is None:
                continue
            if process.returncode == CANNOT_START:
                leave(name, "cannot start as configured (its line above says why)")
                continue
            now = time.monotonic()
            restarts[name] = [moment for moment in restarts[name] if now - moment < 60] + [now]
            if len(restarts[name]) > RESTARTS_PER_MINUTE:
                leave(name, f"keeps exiting (last code {process.returncode})")
                continue
            say(f"{name} exited with {process.returncode}; starting it again")
            processes[name] = start(*commands[name])
        time.sleep(POLL_SECONDS)


def kafka_commands(
    env: dict[str, str], host: str = "127.0.0.1", web_port: int = 8000
) -> dict[str, tuple[list[str], dict[str, str]]]:
    """The Kafka consumer, when LINEAGE_KAFKA_BOOTSTRAP_SERVERS is set. ``mock`` starts
    librdkafka's mock cluster first (local use only: in memory, gone when make run stops)
    and puts its address in ``env``, so that every process make run starts sees it: the
    consumer reads it and the web server's admin replays dead letters from it; topics
    default to ``openlineage`` and ``metadata``. The consumer's probes listen on ``host``,
    on the port ``consumer_port`` chooses."""
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
    port = consumer_port(env, host, web_port)
    if port:
        say(f"the Kafka consumer's /healthz, /readyz and /metrics: http://{host}:{port}/")
    consumer_env = {**env, "LINEAGE_CONSUMER_HOST": host, "LINEAGE_CONSUMER_PORT": str(port)}
    return {"consumer": ([str(BIN / "python"), "manage.py", "consume_kafka"], consumer_env)}


def main() -> None:
    env = dict(os.environ)
    # One address for everything make run opens (the web server, the consumer's probes).
    host = env["HOST"] = env.get("HOST") or "127.0.0.1"
    port = port_setting(env, "PORT", "8000")
    env["PORT"] = str(port)
    if env.get("LINEAGE_CONSUMER_PORT", "").strip():
        port_setting(env, "LINEAGE_CONSUMER_PORT", "", lowest=0)  # refused before anything starts
    check_web_port(host, port)
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
    # First: the mock cluster's address goes into env, for the web server's replay too.
    kafka = kafka_commands(env, host, port)
    say("starting the web server, a Celery worker and the scheduler")
    commands = {
        "web": (web_command(), {**env, **web_environment(env)}),
        "worker": (celery_command("worker", "--concurrency", "2"), env),
        "scheduler": (
            celery_command("beat", "--schedule", str(LOCAL / "celerybeat-schedule")),
            env,
        ),
        **kafka,
    }
    processes = {name: start(*command) for name, command in commands.items()}
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
