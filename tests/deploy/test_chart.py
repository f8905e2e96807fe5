"""The Helm chart, rendered by Helm's own engine, linted, and validated against Kubernetes."""

import base64
from typing import Any
from urllib.parse import urlsplit

import helm_python
import kubernetes_validate
import pytest
from django.urls import resolve

from ingest.health import healthz, readyz
from ingest.metrics import metrics_view
from tests.deploy.rendering import (
    CHART,
    KUBE_VERSIONS,
    VARIANTS,
    Rendered,
    containers,
    pod_specs,
    render,
    render_values,
)

ALL = sorted(VARIANTS)
SECRET_KEYS = {
    "DATABASE_URL",
    "REDIS_URL",
    "DJANGO_SECRET_KEY",
    "LINEAGE_INITIAL_INGEST_TOKEN",
    "LINEAGE_INITIAL_READ_TOKEN",
}
HOOK = "helm.sh/hook"
WEIGHT = "helm.sh/hook-weight"


def _hook_phases(manifest: dict[str, Any]) -> set[str]:
    annotations = manifest["metadata"].get("annotations") or {}
    return set(filter(None, annotations.get(HOOK, "").split(",")))


def _secret_values(variant: str) -> list[str]:
    """Every secret string of a variant: passwords, keys and tokens, given or generated."""
    values = VARIANTS[variant]
    found = [values.get("secretKey", ""), *(values.get("initialTokens") or {}).values()]
    for url in (values.get("database", {}).get("url", ""), values.get("redis", {}).get("url", "")):
        found.append(urlsplit(url).password or "")
    for secret in render(variant).of_kind("Secret"):
        found.append(base64.b64decode(secret["data"]["DJANGO_SECRET_KEY"]).decode())
    return [value for value in found if value]


# --- Helm itself ------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL)
def test_helm_lint_strict_is_clean(variant: str) -> None:
    for kube_version in KUBE_VERSIONS:
        report = helm_python.lint(
            CHART, VARIANTS[variant], strict=True, kube_version=f"v{kube_version}"
        )
        problems = [m for m in report["messages"] if m["severity"] >= 2]
        assert not report["errors"] and not problems, (report["errors"], problems)


def test_helm_lint_catches_a_broken_chart() -> None:
    """The lint run above can fail: values the schema refuses are reported as errors."""
    report = helm_python.lint(CHART, {"web": {"replicas": 3}}, strict=True)
    assert report["errors"] or any(m["severity"] >= 2 for m in report["messages"])


@pytest.mark.parametrize(
    "values",
    [
        {"web": {"replicas": 3}},  # a typo is refused, not ignored
        {"secretKey": "too-short"},
        {"database": {"url": "mysql://db/lineage"}},
        {"podSecurityContext": {"runAsNonRoot": False}},
        {"initialTokens": {"ingest": "not-a-token"}},
        {"beat": {"enabled": True, "replicaCount": 2}},
    ],
)
def test_schema_refuses_bad_values(values: dict[str, Any]) -> None:
    with pytest.raises(helm_python.HelmError):
        render_values(values)


@pytest.mark.parametrize("variant", ALL)
def test_every_manifest_is_valid_for_current_kubernetes(variant: str) -> None:
    rendered = render(variant)
    assert rendered.manifests
    for manifest in rendered.manifests:
        if manifest["apiVersion"].startswith("monitoring.coreos.com/"):
            continue  # a CRD: checked by test_service_monitor_scrapes_metrics_endpoints
        for kube_version in KUBE_VERSIONS:
            kubernetes_validate.validate(manifest, kube_version, strict=True)


def test_kubernetes_validation_can_fail() -> None:
    web = render("default").named("Deployment", "-web")
    broken = {**web, "spec": {**web["spec"], "replicas": "two"}}
    with pytest.raises(kubernetes_validate.ValidationError):
        kubernetes_validate.validate(broken, KUBE_VERSIONS[-1], strict=True)


def test_upgrade_renders_the_same_kinds_as_install() -> None:
    install = render("production")
    upgrade = render_values(VARIANTS["production"], upgrade=True)
    assert sorted(m["kind"] for m in upgrade.manifests) == sorted(
        m["kind"] for m in install.manifests
    )


# --- Workloads --------------------------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL)
def test_web_worker_and_migrations_exist_and_beat_is_one_recreated_replica(variant: str) -> None:
    rendered = render(variant)
    rendered.named("Deployment", "-web")
    rendered.named("Deployment", "-worker")
    rendered.named("Job", "-migrate")
    beats = [d for d in rendered.of_kind("Deployment") if d["metadata"]["name"].endswith("-beat")]
    if VARIANTS[variant].get("beat", {}).get("enabled", True):
        (beat,) = beats
        assert beat["spec"]["replicas"] == 1
        assert beat["spec"]["strategy"] == {"type": "Recreate"}
        targets = {
            h["spec"]["scaleTargetRef"]["name"] for h in rendered.of_kind("HorizontalPodAutoscaler")
        }
        assert beat["metadata"]["name"] not in targets
    else:
        assert beats == []


@pytest.mark.parametrize("variant", ALL)
def test_migration_hook_runs_before_any_pod_of_the_release(variant: str) -> None:
    """Helm applies pre-install/pre-upgrade hooks, in weight order, before the release's
    resources; every Deployment is a release resource, so no new pod starts before migrate."""
    rendered = render(variant)
    job = rendered.named("Job", "-migrate")
    assert _hook_phases(job) == {"pre-install", "pre-upgrade"}
    assert "before-hook-creation" in job["metadata"]["annotations"]["helm.sh/hook-delete-policy"]
    for deployment in rendered.of_kind("Deployment"):
        assert not _hook_phases(deployment), deployment["metadata"]["name"]
    spec = job["spec"]["template"]["spec"]
    assert spec["restartPolicy"] == "Never"
    commands = [container["command"] for container in containers(spec)]
    assert commands[0] == ["python", "manage.py", "migrate", "--no-input"]
    # Everything the Job reads must exist before it: the operator's Secret, or a hook
    # Secret of a lower weight. Never the release's own Secret or ConfigMap.
    hooks = {
        (m["kind"], m["metadata"]["name"]): int(m["metadata"]["annotations"].get(WEIGHT, "0"))
        for m in rendered.manifests
        if _hook_phases(m) >= {"pre-install", "pre-upgrade"}
    }
    existing = VARIANTS[variant].get("existingSecret")
    for container in containers(spec):
        assert "envFrom" not in container
        for variable in container["env"]:
            reference = variable.get("valueFrom", {}).get("secretKeyRef")
            if reference:
                name = reference["name"]
                job_weight = hooks[("Job", job["metadata"]["name"])]
                assert name == existing or hooks.get(("Secret", name), 1) < job_weight


@pytest.mark.parametrize("variant", ALL)
def test_probes_point_at_endpoints_that_exist(variant: str) -> None:
    web = render(variant).named("Deployment", "-web")
    (container,) = web["spec"]["template"]["spec"]["containers"]
    port_names = {port["name"] for port in container["ports"]}
    live = container["livenessProbe"]["httpGet"]
    ready = container["readinessProbe"]["httpGet"]
    assert live["port"] in port_names and ready["port"] in port_names
    assert resolve(live["path"]).func is healthz
    assert resolve(ready["path"]).func is readyz
    assert container["ports"][0]["containerPort"] == 8000  # config/server.py's default port


@pytest.mark.parametrize("variant", ALL)
def test_pods_are_locked_down(variant: str) -> None:
    for name, spec in pod_specs(render(variant)).items():
        pod = spec["securityContext"]
        assert pod["runAsNonRoot"] is True and pod["runAsUser"] != 0, name
        assert pod["seccompProfile"] == {"type": "RuntimeDefault"}, name
        assert spec["automountServiceAccountToken"] is False, name
        volumes = {volume["name"]: volume for volume in spec["volumes"]}
        for container in containers(spec):
            context = container["securityContext"]
            assert context["readOnlyRootFilesystem"] is True, name
            assert context["allowPrivilegeEscalation"] is False, name
            assert context["capabilities"]["drop"] == ["ALL"], name
            assert "add" not in context["capabilities"], name
            mounts = {m["mountPath"]: m["name"] for m in container["volumeMounts"]}
            assert "emptyDir" in volumes[mounts["/tmp"]], name
            assert container["resources"]["requests"]["cpu"], name
            assert container["resources"]["limits"]["memory"], name


@pytest.mark.parametrize("variant", ALL)
def test_every_multiprocess_metrics_directory_is_on_the_writable_tmp(variant: str) -> None:
    for spec in pod_specs(render(variant)).values():
        for container in containers(spec):
            for variable in container.get("env", []):
                if variable["name"] == "PROMETHEUS_MULTIPROC_DIR":
                    assert variable["value"].startswith("/tmp/")


# --- Secrets and configuration ----------------------------------------------------------------


@pytest.mark.parametrize("variant", ALL)
def test_secrets_never_appear_in_config_maps_or_plain_env(variant: str) -> None:
    rendered = render(variant)
    secrets = _secret_values(variant)
    # The check below must have something to look for, unless the operator holds them all.
    assert secrets or VARIANTS[variant].get("existingSecret")
    plain: list[str] = []
    for config_map in rendered.of_kind("ConfigMap"):
        assert not SECRET_KEYS & set(config_map["data"]), config_map["metadata"]["name"]
        plain += [f"{k}={v}" for k, v in config_map["data"].items()]
    for spec in pod_specs(rendered).values():
        for container in containers(spec):
            for variable in container.get("env", []):
                assert variable["name"] not in SECRET_KEYS or "value" not in variable
                plain.append(f"{variable['name']}={variable.get('value', '')}")
            plain += container["command"]
    for secret in secrets:
        assert not any(secret in text for text in plain)


@pytest.mark.parametrize("variant", ALL)
def test_pods_read_every_secret_key_from_a_secret(variant: str) -> None:
    rendered = render(variant)
    existing = VARIANTS[variant].get("existingSecret")
    names = {s["metadata"]["name"] for s in rendered.of_kind("Secret")} | {existing}
    config_maps = {c["metadata"]["name"] for c in rendered.of_kind("ConfigMap")}
    for name, spec in pod_specs(rendered).items():
        for container in containers(spec):
            env = {v["name"]: v for v in container["env"]}
            for key in ("DATABASE_URL", "REDIS_URL", "DJANGO_SECRET_KEY"):
                reference = env[key]["valueFrom"]["secretKeyRef"]
                assert reference["name"] in names, (name, key)
                assert reference["key"] == key
            for source in container.get("envFrom", []):
                assert source["configMapRef"]["name"] in config_maps


def test_existing_secret_means_the_chart_renders_no_secret() -> None:
    rendered = render("production")
    assert rendered.of_kind("Secret") == []


def test_the_chart_secret_holds_what_the_settings_need() -> None:
    (secret,) = [s for s in render("minimal").of_kind("Secret") if not _hook_phases(s)]
    data = {k: base64.b64decode(v).decode() for k, v in secret["data"].items()}
    assert data["DATABASE_URL"] == VARIANTS["minimal"]["database"]["url"]
    assert data["DJANGO_SECRET_KEY"] == VARIANTS["minimal"]["secretKey"]
    generated = next(s for s in render("default").of_kind("Secret") if not _hook_phases(s))
    assert len(base64.b64decode(generated["data"]["DJANGO_SECRET_KEY"])) >= 50


def test_initial_tokens_are_registered_by_the_hook_from_the_secret() -> None:
    rendered = render("initial-tokens")
    job = rendered.named("Job", "-migrate")
    spec = job["spec"]["template"]["spec"]
    assert [c["name"] for c in spec["initContainers"]] == ["migrate"]
    (register,) = spec["containers"]
    env = {v["name"]: v for v in register["env"]}
    for scope in ("INGEST", "READ"):
        reference = env[f"LINEAGE_INITIAL_{scope}_TOKEN"]["valueFrom"]["secretKeyRef"]
        assert reference["optional"] is True
    assert "hash_token" in register["command"][-1]
    compile(register["command"][-1], "register-initial-tokens", "exec")


def test_production_settings_match_the_configmap() -> None:
    (config_map,) = render("production").of_kind("ConfigMap")
    data = config_map["data"]
    assert data["DJANGO_SETTINGS_MODULE"] == "config.settings.production"
    assert data["LOG_FORMAT"] == "json"
    hosts = data["DJANGO_ALLOWED_HOSTS"].split(",")
    assert "lineage.example.com" in hosts and "lineage.internal.example.com" in hosts
    assert data["DJANGO_CSRF_TRUSTED_ORIGINS"] == "https://lineage.example.com"
    assert data["LINEAGE_MAX_JSON_DEPTH"] == "48"
    assert data["DJANGO_HSTS_SECONDS"] == "31536000"
    # One ingress in front: its X-Forwarded-For entry is the client; by default none is.
    assert data["DJANGO_NUM_PROXIES"] == "1"
    (default_map,) = render("default").of_kind("ConfigMap")
    assert default_map["data"]["DJANGO_NUM_PROXIES"] == "0"


# --- Networking, scaling, monitoring ----------------------------------------------------------


def _pod_labels(rendered: Rendered, suffix: str) -> dict[str, str]:
    return rendered.named("Deployment", suffix)["spec"]["template"]["metadata"]["labels"]


def _selects(selector: dict[str, str], labels: dict[str, str]) -> bool:
    return all(labels.get(key) == value for key, value in selector.items())


@pytest.mark.parametrize("variant", ALL)
def test_service_selects_only_web_pods_on_their_http_port(variant: str) -> None:
    rendered = render(variant)
    service = next(s for s in rendered.of_kind("Service") if s["spec"].get("clusterIP") != "None")
    assert _selects(service["spec"]["selector"], _pod_labels(rendered, "-web"))
    assert not _selects(service["spec"]["selector"], _pod_labels(rendered, "-worker"))
    assert service["spec"]["ports"][0]["targetPort"] == "http"


@pytest.mark.parametrize("variant", ALL)
def test_autoscalers_and_disruption_budgets_target_web_and_worker(variant: str) -> None:
    rendered = render(variant)
    values = VARIANTS[variant]
    deployments = {d["metadata"]["name"]: d for d in rendered.of_kind("Deployment")}
    for hpa in rendered.of_kind("HorizontalPodAutoscaler"):
        target = hpa["spec"]["scaleTargetRef"]["name"]
        assert target.endswith(("-web", "-worker"))
        assert "replicas" not in deployments[target]["spec"]  # the HPA owns the count
    for pdb in rendered.of_kind("PodDisruptionBudget"):
        selected = [
            name
            for name, d in deployments.items()
            if _selects(
                pdb["spec"]["selector"]["matchLabels"], d["spec"]["template"]["metadata"]["labels"]
            )
        ]
        assert len(selected) == 1 and selected[0].endswith(("-web", "-worker"))
    web_autoscaled = values.get("web", {}).get("autoscaling", {}).get("enabled", True)
    assert len(rendered.of_kind("HorizontalPodAutoscaler")) >= int(web_autoscaled)


def test_ingress_routes_to_the_service() -> None:
    rendered = render("production")
    (ingress,) = rendered.of_kind("Ingress")
    service = next(s for s in rendered.of_kind("Service") if s["spec"].get("clusterIP") != "None")
    backend = ingress["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]
    assert backend == {
        "name": service["metadata"]["name"],
        "port": {"number": service["spec"]["ports"][0]["port"]},
    }
    assert ingress["spec"]["tls"][0]["secretName"] == "lineage-catalog-tls"
    assert render("default").of_kind("Ingress") == []


def _routes(rule: dict[str, Any], url: str) -> bool:
    """Kubernetes' matching of one ingress path (Prefix: by whole path elements)."""
    path, kind = rule["path"], rule["pathType"]
    if kind == "Exact":
        return url == path
    prefix = path.rstrip("/")
    return url == prefix or url.startswith(prefix + "/") or prefix == ""


def _routes_by_characters(rule: dict[str, Any], url: str) -> bool:
    """A controller's matching by characters rather than path elements (nginx's own prefix
    location, ingress-nginx's ImplementationSpecific), in lower case as under use-regex."""
    path, url = rule["path"].lower(), url.lower()
    if rule["pathType"] == "Exact":
        return url.rstrip("/") == path.rstrip("/")
    return url.startswith(path.rstrip("/"))


INGRESS_ON = {"ingress": {"enabled": True}}
PUBLIC_URLS = [
    "/api/v1/lineage",
    "/api/v1/jobs",
    "/api/docs/",
    "/api/schema/",
    "/marquez/api/v1/namespaces",
    "/admin/",
    "/admin/lineage/",
    "/static/admin/css/base.css",
]
INTERNAL_URLS = ["/metrics", "/healthz", "/readyz"]


@pytest.mark.parametrize("values", [INGRESS_ON, VARIANTS["production"], VARIANTS["initial-tokens"]])
def test_the_ingress_routes_the_public_urls_and_not_metrics(values: dict[str, Any]) -> None:
    (ingress,) = render_values(values).of_kind("Ingress")
    rules = [path for rule in ingress["spec"]["rules"] for path in rule["http"]["paths"]]
    for url in PUBLIC_URLS:
        assert any(_routes(rule, url) for rule in rules), url
    for url in INTERNAL_URLS:
        assert not any(_routes(rule, url) for rule in rules), url
        assert not any(_routes_by_characters(rule, url) for rule in rules), url


@pytest.mark.parametrize(
    "paths",
    [
        [{"path": "/", "pathType": "Prefix"}],
        [{"path": "/api", "pathType": "Prefix"}, {"path": "/metrics", "pathType": "Exact"}],
        [{"path": "/metrics/", "pathType": "Prefix"}],
        [{"path": "/", "pathType": "ImplementationSpecific"}],
        [{"path": "/(.*)", "pathType": "ImplementationSpecific"}],
        [{"path": "/metrics", "pathType": "ImplementationSpecific"}],
        # nginx's own prefix match (ingress-nginx's ImplementationSpecific) is by characters:
        # each of these routes /metrics there (ADR 0171).
        [{"path": "/m", "pathType": "ImplementationSpecific"}],
        [{"path": "/metric", "pathType": "ImplementationSpecific"}],
        [{"path": "/api", "pathType": "Prefix"}, {"path": "/me", "pathType": "Prefix"}],
        # use-regex makes every path of the host a case-insensitive pattern.
        [{"path": "/METRICS", "pathType": "ImplementationSpecific"}],
    ],
)
def test_a_path_that_would_route_metrics_fails_unless_exposed(paths: list[dict[str, str]]) -> None:
    hosts = [{"host": "lineage.example.com", "paths": paths}]
    with pytest.raises(Exception, match="would route /metrics"):
        render_values({"ingress": {"enabled": True, "hosts": hosts}})
    exposed = {"ingress": {"enabled": True, "hosts": hosts, "exposeMetrics": True}}
    (ingress,) = render_values(exposed).of_kind("Ingress")
    rules = ingress["spec"]["rules"][0]["http"]["paths"]
    assert any(_routes_by_characters(rule, "/metrics") for rule in rules) or any(
        "(" in rule["path"] for rule in rules
    )


@pytest.mark.parametrize("kind", ["LoadBalancer", "NodePort"])
def test_a_service_reached_from_outside_fails_unless_metrics_are_exposed(kind: str) -> None:
    """The Service's whole port is /metrics and the probes as much as the APIs: only the
    ingress picks the public paths (ADR 0171's check, for the Service)."""
    with pytest.raises(Exception, match="would make the web pods' /metrics"):
        render_values({"service": {"type": kind}})
    services = render_values({"service": {"type": kind, "exposeMetrics": True}}).of_kind("Service")
    assert {service["spec"]["type"] for service in services} >= {kind}


def test_service_monitor_scrapes_metrics_endpoints() -> None:
    rendered = render("production")
    monitors = rendered.of_kind("ServiceMonitor")
    assert {m["metadata"]["name"].rsplit("-", 1)[1] for m in monitors} == {"web", "worker"}
    services = rendered.of_kind("Service")
    for monitor in monitors:
        assert monitor["apiVersion"] == "monitoring.coreos.com/v1"
        assert monitor["metadata"]["labels"]["release"] == "kube-prometheus-stack"
        (endpoint,) = monitor["spec"]["endpoints"]
        assert resolve(endpoint["path"]).func is metrics_view
        matched = [
            s
            for s in services
            if _selects(monitor["spec"]["selector"]["matchLabels"], s["metadata"]["labels"])
        ]
        assert len(matched) == 1
        assert endpoint["port"] in {p["name"] for p in matched[0]["spec"]["ports"]}
    assert render("default").of_kind("ServiceMonitor") == []


def test_notes_tell_how_to_get_a_token_and_where_producers_send_events() -> None:
    notes = render("default").notes
    assert "python manage.py create_token --scope ingest --name" in notes
    assert "kubectl --namespace lineage exec deployment/lc-lineage-catalog-web" in notes
    assert "OPENLINEAGE_URL=http://lc-lineage-catalog.lineage.svc:80" in notes
    assert "OPENLINEAGE_ENDPOINT=api/v1/lineage" in notes
    resolve("/api/v1/lineage")
    resolve("/api/v1/lineage/batch")
    assert "placeholder" in notes  # the default database URL is flagged
    assert "placeholder" not in render("minimal").notes


def test_notes_say_what_the_ingress_routes_and_whether_anything_migrated() -> None:
    """The NOTES printed https://<host>/ as the service URL, a page the ingress does not
    route (only the public prefixes), and said the migration hook had migrated the
    database when migrations.enabled=false had left the hook out."""
    notes = render("production").notes
    (line,) = [line for line in notes.splitlines() if "://lineage.example.com" in line]
    assert "https://lineage.example.com (through the ingress: /api, /marquez, /admin" in line
    for path in ("/admin/", "/api/docs/"):
        assert path in line
        resolve(path)
    assert "https://lineage.example.com/\n" not in notes + "\n"
    assert "The migration hook has applied" in render("default").notes
    unmigrated = render_values({"migrations": {"enabled": False}}).notes
    assert "The migration hook has applied" not in unmigrated
    assert "nothing has migrated the database" in unmigrated


# --- Kafka ingest -----------------------------------------------------------------------------

_KAFKA = {"enabled": True, "bootstrapServers": "k:9092", "topics": ["ol"]}


@pytest.mark.parametrize(
    ("kafka", "message"),
    [
        # A consumer beyond the partitions would sit idle.
        ({**_KAFKA, "partitions": 2, "replicaCount": 3}, "may not exceed kafka.partitions"),
        ({**_KAFKA, "bootstrapServers": ""}, "kafka.bootstrapServers"),
        ({**_KAFKA, "topics": []}, "kafka.topics"),
        ({**_KAFKA, "topics": ["ol:avro"]}, "topics"),
        ({**_KAFKA, "secretKeys": ["LINEAGE_KAFKA_SASL_PASSWORD"]}, "kafka.existingSecret"),
    ],
)
def test_kafka_values_are_checked_and_each_problem_named(
    kafka: dict[str, Any], message: str
) -> None:
    render_values({"kafka": _KAFKA})  # the settings themselves are accepted
    with pytest.raises(helm_python.HelmError, match=message):
        render_values({"kafka": kafka})


@pytest.mark.parametrize("variant", ALL)
def test_kafka_consumer_is_off_unless_enabled(variant: str) -> None:
    consumers = [
        d
        for d in render(variant).of_kind("Deployment")
        if d["metadata"]["name"].endswith("-kafka-consumer")
    ]
    assert len(consumers) == int(bool(VARIANTS[variant].get("kafka", {}).get("enabled")))


def test_kafka_consumer_runs_consume_kafka_with_the_settings_it_reads() -> None:
    values = VARIANTS["kafka"]["kafka"]
    deployment = render("kafka").named("Deployment", "-kafka-consumer")
    assert deployment["spec"]["replicas"] == values["replicaCount"] <= values["partitions"]
    (container,) = containers(deployment["spec"]["template"]["spec"])
    assert container["command"] == ["python", "manage.py", "consume_kafka"]
    env = {variable["name"]: variable for variable in container["env"]}
    assert env["LINEAGE_KAFKA_BOOTSTRAP_SERVERS"]["value"] == values["bootstrapServers"]
    assert env["LINEAGE_KAFKA_TOPICS"]["value"] == "openlineage,metadata-records:metadata"
    assert env["LINEAGE_KAFKA_GROUP_ID"]["value"] == "lineage-catalog"
    # The batch's byte bound, one of the bounds that keep the consumer within its limit.
    assert env["LINEAGE_CONSUMER_BATCH_BYTES"]["value"] == str(16 * 1024 * 1024)
    assert env["LINEAGE_KAFKA_SECURITY_PROTOCOL"]["value"] == "SASL_SSL"
    assert env["LINEAGE_KAFKA_SASL_MECHANISM"]["value"] == "SCRAM-SHA-512"
    password = env["LINEAGE_KAFKA_SASL_PASSWORD"]["valueFrom"]["secretKeyRef"]
    assert password == {"name": "lineage-kafka", "key": "LINEAGE_KAFKA_SASL_PASSWORD"}
    port = container["ports"][0]["containerPort"]
    assert env["LINEAGE_CONSUMER_PORT"]["value"] == str(port)
    # The probe server's default is 127.0.0.1 (issue 38 item 11); the kubelet needs the pod's.
    assert env["LINEAGE_CONSUMER_HOST"]["value"] == "0.0.0.0"
    assert container["readinessProbe"]["httpGet"]["path"] == "/readyz"
    assert container["livenessProbe"]["httpGet"]["path"] == "/healthz"
