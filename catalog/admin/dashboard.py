"""The admin index dashboard: ingest rate, derivation lag and backlog, failures, producers.

Every figure is bounded: time windows use the BRIN index on ``received_at``, the backlog and
failure counts use the partial indexes on pending/failed events and stop counting at a cap,
and table sizes, backlog and lag are catalog/reads/stats.py's (the figures /api/v1/stats serves).
The whole dashboard is cached for a minute per process, so a busy admin index costs one
computation per minute.
"""

from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
from urllib.parse import quote

from django.core.cache import cache
from django.db import connection
from django.utils import timezone
from django.utils.html import format_html, format_html_join
from django.utils.safestring import SafeString, mark_safe

from catalog.reads import stats
from core.redaction import redact_text
from ingest import derivation_status
from ingest.kafka.gauges import PartitionLag, open_dead_letters, partition_lag

CACHE_KEY = "lineage:admin:dashboard"
CACHE_SECONDS = 60
HOURS = 48
TOP_PRODUCERS = 8


@dataclass
class Dashboard:
    generated_at: datetime
    hourly: list[tuple[datetime, int]] = field(default_factory=list)
    backlog: int = 0
    backlog_capped: bool = False
    lag_seconds: float | None = None
    failed: int = 0
    failed_capped: bool = False
    failed_recent: list[tuple[int, str, str]] = field(default_factory=list)
    producers: list[tuple[str, int]] = field(default_factory=list)
    runs_by_state: list[tuple[str, int]] = field(default_factory=list)
    totals: dict[str, int] = field(default_factory=dict)
    # Kafka ingest: each partition's lag as its consumer last reported it, and dead letters.
    kafka_lag: list[PartitionLag] = field(default_factory=list)
    dead_letters: int = 0

    @property
    def kafka_lag_total(self) -> int:
        return sum(row.lag for row in self.kafka_lag)

    @property
    def events_48h(self) -> int:
        return sum(count for _, count in self.hourly)

    @property
    def lag_text(self) -> str:
        if self.lag_seconds is None:
            return "none pending"
        seconds = int(self.lag_seconds)
        if seconds < 120:
            return f"{seconds} s"
        if seconds < 7200:
            return f"{seconds // 60} min"
        return f"{seconds // 3600} h"

    @property
    def hourly_chart(self) -> SafeString:
        return bar_chart_svg(self.hourly)

    @property
    def producer_chart(self) -> SafeString:
        return horizontal_bars_svg(self.producers, link="/admin/ingest/event/?q={}")

    @property
    def runs_chart(self) -> SafeString:
        return horizontal_bars_svg(
            self.runs_by_state, link="/admin/catalog/run/?state__exact={}&started_within=24h"
        )


def dashboard_for(user: Any) -> Dashboard | None:
    """The dashboard for ``user`` if they may read it, else None. It shows the event log
    (failed events, producers, every table's size), so the rule of /api/v1/stats and the
    front page decides (catalog.reads.stats.may_read), not merely reaching the admin: a
    staff user given single permissions sees only those."""
    return get_dashboard() if stats.may_read(user) else None


def get_dashboard(use_cache: bool = True) -> Dashboard:
    if use_cache:
        cached = cache.get(CACHE_KEY)
        if cached is not None:
            return cached
    dashboard = build_dashboard()
    cache.set(CACHE_KEY, dashboard, CACHE_SECONDS)
    return dashboard


def build_dashboard(now: datetime | None = None) -> Dashboard:
    now = now or timezone.now()
    start = (now - timedelta(hours=HOURS - 1)).replace(minute=0, second=0, microsecond=0)
    dashboard = Dashboard(generated_at=now)
    with connection.cursor() as cursor:
        # Ingest rate: a received_at range (BRIN ingest_event_received_brin).
        cursor.execute(
            "SELECT date_trunc('hour', received_at) AS hour, count(*) FROM ingest_event "
            "WHERE received_at >= %s GROUP BY 1",
            [start],
        )
        per_hour = {hour: count for hour, count in cursor.fetchall()}
        dashboard.hourly = [
            (hour, per_hour.get(hour, 0))
            for hour in (start + timedelta(hours=offset) for offset in range(HOURS))
        ]
        backlog = stats.derivation_backlog()
        dashboard.backlog = backlog.pending
        dashboard.backlog_capped = backlog.pending >= backlog.cap
        dashboard.lag_seconds = backlog.lag_seconds(now)
        dashboard.failed = backlog.failed
        dashboard.failed_capped = backlog.failed >= backlog.cap
        cursor.execute(derivation_status.RECENT_FAILURES, [5])
        dashboard.failed_recent = [
            (event_id, redact_text(label), redact_text(error))
            for event_id, label, error in cursor.fetchall()
        ]
        # Top producers of the last 24 hours (BRIN range, then a small GROUP BY).
        cursor.execute(
            "SELECT coalesce(producer, '(none)'), count(*) FROM ingest_event "
            "WHERE received_at >= %s GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT %s",
            [now - timedelta(hours=24), TOP_PRODUCERS],
        )
        # Producer text: redacted, the link's search term too (never a secret in an href).
        dashboard.producers = [(redact_text(name), count) for name, count in cursor.fetchall()]
        # Runs started in the last 24 hours by state (catalog_run_state_idx per state).
        cursor.execute(
            "SELECT state, count(*) FROM catalog_run WHERE started_at >= %s "
            "GROUP BY 1 ORDER BY 2 DESC",
            [now - timedelta(hours=24)],
        )
        dashboard.runs_by_state = list(cursor.fetchall())
    dashboard.kafka_lag = partition_lag()
    dashboard.dead_letters = sum(count for _, _, count in open_dead_letters())
    dashboard.totals = {
        label.replace("_", " "): count for label, count in stats.table_sizes().items()
    }
    return dashboard


def bar_chart_svg(
    series: list[tuple[datetime, int]], width: int = 576, height: int = 120
) -> SafeString:
    """Vertical bars, one per hour, with a tooltip each; rendered on the server."""
    if not series:
        return mark_safe("")
    peak = max((count for _, count in series), default=0) or 1
    bar = width / len(series)
    bars = format_html_join(
        "",
        '<rect x="{}" y="{}" width="{}" height="{}" fill="#417690"><title>{} — {} events</title>'
        "</rect>",
        (
            (
                f"{index * bar:.1f}",
                f"{height - 16 - (count / peak) * (height - 24):.1f}",
                f"{max(bar - 1, 1):.1f}",
                f"{(count / peak) * (height - 24):.1f}",
                f"{hour:%a %H:00}",
                count,
            )
            for index, (hour, count) in enumerate(series)
        ),
    )
    return format_html(
        '<svg class="lc-chart" role="img" aria-label="events ingested per hour" width="{}" '
        'height="{}" viewBox="0 0 {} {}">{}<text x="0" y="{}" font-size="10">{}</text>'
        '<text x="{}" y="{}" font-size="10" text-anchor="end">now</text>'
        '<text x="{}" y="10" font-size="10" text-anchor="end">max {}/h</text></svg>',
        width,
        height,
        width,
        height,
        bars,
        height - 2,
        f"{series[0][0]:%a %H:00}",
        width,
        height - 2,
        width,
        peak,
    )


def horizontal_bars_svg(
    rows: list[tuple[str, int]], link: str = "", width: int = 576, row_height: int = 18
) -> SafeString:
    """Labelled horizontal bars (top producers, runs by state), each bar a link."""
    if not rows:
        return mark_safe('<p class="help">Nothing in this window.</p>')
    peak = max(count for _, count in rows) or 1
    label_width = 300
    height = row_height * len(rows)
    items = format_html_join(
        "",
        '<a href="{}"><text x="0" y="{}" font-size="11">{}</text>'
        '<rect x="{}" y="{}" width="{}" height="{}" fill="#79aec8"><title>{}: {}</title></rect>'
        '<text x="{}" y="{}" font-size="11">{}</text></a>',
        (
            (
                link.format(_quote(label)) if link else "#",
                index * row_height + 13,
                label if len(label) <= 48 else "…" + label[-47:],
                label_width,
                index * row_height + 3,
                f"{(count / peak) * (width - label_width - 60):.1f}",
                row_height - 6,
                label,
                count,
                label_width + (count / peak) * (width - label_width - 60) + 4,
                index * row_height + 13,
                count,
            )
            for index, (label, count) in enumerate(rows)
        ),
    )
    return format_html(
        '<svg class="lc-chart" role="img" width="{}" height="{}" viewBox="0 0 {} {}">{}</svg>',
        width,
        height,
        width,
        height,
        items,
    )


def _quote(value: str) -> str:
    return quote(value, safe="")
