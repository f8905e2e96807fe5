"""Read-side routes (filled in by the read API)."""

urlpatterns: list = []
