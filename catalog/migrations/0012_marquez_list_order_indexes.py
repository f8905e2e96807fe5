# Marquez lists jobs by last update (newest first) and datasets by name (its JobDao and
# DatasetDao): these indexes serve exactly those orders on the mount, so a page stays an
# index walk however many jobs or datasets there are (docs/marquez.md).

import django.db.models.functions.text
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0015_job_edge_order_index'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='dataset',
            index=models.Index(django.db.models.functions.text.MD5('namespace'), django.db.models.functions.text.Left('name', 200), models.F('id'), name='catalog_dataset_ns_name_idx'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(models.OrderBy(models.F('last_seen'), descending=True, nulls_last=True), models.OrderBy(models.F('id'), descending=True), name='catalog_job_update_idx'),
        ),
    ]
