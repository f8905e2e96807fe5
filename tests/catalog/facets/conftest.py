import pytest
from django.test import Client

from tests.marquez.conftest import MarquezClient


@pytest.fixture
def api(read_client: Client, steady_token_cache: None) -> Client:
    return read_client


@pytest.fixture
def mz(read_client: Client, steady_token_cache: None) -> MarquezClient:
    return MarquezClient(read_client)
