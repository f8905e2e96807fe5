"""A dataset's aliases in the read API: the names it is known by, and why (the dataset
list's and detail's ``aliases``, /datasets/{id}/aliases, a job's or run's datasets)."""

from rest_framework import serializers

from catalog.models import AliasRule, DatasetAlias


class AliasSerializer(serializers.ModelSerializer):
    """A name the dataset is known by, and why (the first reason that named it)."""

    reason_rule: serializers.SlugRelatedField[AliasRule] = serializers.SlugRelatedField(
        slug_field="slug", read_only=True, allow_null=True
    )

    class Meta:
        model = DatasetAlias
        fields = [
            "namespace",
            "name",
            "reason",
            "reason_detail",
            "reason_event_id",
            "reason_rule",
            "first_seen",
            "last_seen",
        ]


class ShortAliasSerializer(serializers.ModelSerializer):
    class Meta:
        model = DatasetAlias
        fields = ["namespace", "name", "reason"]
