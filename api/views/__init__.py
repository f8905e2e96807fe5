"""Read-side views; each module is one group of endpoints of docs/api.md."""
