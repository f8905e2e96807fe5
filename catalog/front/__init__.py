"""The front page at ``/``: health, headline figures, the producers' snippets."""
