"""A person in a served admin, over HTTP with cookies and CSRF, as a browser is: for the
tests that start the web server (make run, the fault tests) and act in its admin."""

import http.cookiejar
import re
import urllib.parse
import urllib.request


class AdminSession:
    """Logged in at ``base`` (``http://127.0.0.1:PORT``) as ``username``."""

    def __init__(self, base: str, password: str, username: str = "admin") -> None:
        self.base = base
        self.jar = http.cookiejar.CookieJar()
        self.opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(self.jar))
        self.post("/admin/login/?next=/admin/", {"username": username, "password": password})

    def get(self, path: str) -> str:
        with self.opener.open(self.base + path, timeout=60) as answer:
            return answer.read().decode()

    def post(self, path: str, fields: dict[str, object]) -> str:
        """The form at ``path`` sent with ``fields`` and the page's CSRF token."""
        page = self.get(path)
        token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert token, page[:2000]
        body = urllib.parse.urlencode(
            {**fields, "csrfmiddlewaretoken": token.group(1)}, doseq=True
        ).encode()
        request = urllib.request.Request(
            self.base + path, data=body, headers={"Referer": self.base + path}
        )
        with self.opener.open(request, timeout=60) as answer:
            return answer.read().decode()
