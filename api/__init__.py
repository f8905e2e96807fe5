"""The read side: serializers, viewsets, filters, pagination. Nothing depends on ``api``."""
