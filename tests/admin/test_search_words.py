"""A search of more words than the admin searches is a readable 400 page (ADR 0207).

Django's search tests every word against every searched column of every row it reads: the
admin log's search reads its newest 10,000 entries (ADR 0195), and 2,000 words that each
matched every entry kept it busy until the read timeout's 503, 10 s a request, for any
staff reader. The query guard (catalog/admin/query_guard.py) refuses a term of more than
``MOST_SEARCH_WORDS`` words on every admin page; a term within it still searches.
"""

import pytest
from django.contrib import admin
from django.contrib.admin.models import CHANGE, LogEntry
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.test import Client
from django.urls import reverse

from catalog.admin.query_guard import MOST_SEARCH_WORDS
from catalog.models import AliasRule

pytestmark = pytest.mark.django_db

TOO_MANY = " ".join(["replayed"] * (MOST_SEARCH_WORDS + 1))


def _changelists() -> list[str]:
    return [
        reverse(f"admin:{model._meta.app_label}_{model._meta.model_name}_changelist")
        for model in admin.site._registry
    ]


def test_every_changelist_refuses_a_search_of_too_many_words(super_client: Client) -> None:
    for url in _changelists():
        answer = super_client.get(url, {"q": TOO_MANY})
        assert answer.status_code == 400, (url, answer.status_code)
        page = answer.content.decode()
        assert 'id="bad-query"' in page and f"more than {MOST_SEARCH_WORDS} words" in page, url


def test_the_admin_log_refuses_a_long_search_for_a_reader(reader_client: Client) -> None:
    answer = reader_client.get("/admin/admin/logentry/", {"q": " ".join(["a"] * 2000)})
    assert answer.status_code == 400
    assert f"more than {MOST_SEARCH_WORDS} words" in answer.content.decode()


def test_a_search_within_the_words_still_finds_and_a_quoted_phrase_is_one_word(
    super_client: Client, superuser: User
) -> None:
    LogEntry.objects.create(
        user=superuser,
        content_type=ContentType.objects.get_for_model(AliasRule),
        object_id="1",
        object_repr="orders rule",
        action_flag=CHANGE,
        change_message="replayed the orders rule",
    )
    within = " ".join(["replayed"] * MOST_SEARCH_WORDS)
    answer = super_client.get("/admin/admin/logentry/", {"q": within})
    assert answer.status_code == 200 and "orders rule" in answer.content.decode()
    phrase = '"' + " ".join(["the"] * 40) + '" replayed'
    assert super_client.get("/admin/admin/logentry/", {"q": phrase}).status_code == 200
