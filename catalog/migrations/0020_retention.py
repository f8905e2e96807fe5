"""Retention's summaries of removed runs and events (ADR 0079): kept by rederive."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0019_remembered_ids'),
    ]

    operations = [
        migrations.CreateModel(
            name='RetainedAlias',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key_hash', models.BinaryField(max_length=32)),
                ('namespace', models.TextField()),
                ('name', models.TextField()),
                ('first_seen', models.DateTimeField(null=True)),
                ('last_seen', models.DateTimeField(null=True)),
                ('reason', models.CharField(max_length=8)),
                ('reason_detail', models.TextField(blank=True, default='')),
                ('reason_version', models.JSONField(default=list)),
                ('is_table_name', models.BooleanField(default=False)),
                ('facets', models.JSONField(default=dict)),
                ('facet_versions', models.JSONField(default=dict)),
            ],
            options={
                'db_table': 'catalog_retained_alias',
                'constraints': [models.UniqueConstraint(fields=('key_hash',), name='catalog_retained_alias_uniq')],
            },
        ),
        migrations.CreateModel(
            name='RetainedColumnEdge',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('job_key', models.BinaryField(max_length=32)),
                ('target_key', models.BinaryField(max_length=32)),
                ('source_key', models.BinaryField(max_length=32)),
                ('key_hash', models.BinaryField(max_length=32)),
                ('target_field', models.TextField()),
                ('source_field', models.TextField()),
                ('transformation_type', models.CharField(blank=True, default='', max_length=32)),
                ('transformation_subtype', models.CharField(blank=True, default='', max_length=64)),
                ('transformation_description', models.TextField(blank=True, default='')),
                ('masking', models.BooleanField(default=False)),
                ('dataset_level', models.BooleanField(default=False)),
                ('field_transformation_type', models.CharField(blank=True, default='', max_length=32)),
                ('field_transformation_description', models.TextField(blank=True, default='')),
                ('first_seen', models.DateTimeField()),
                ('last_seen', models.DateTimeField()),
                ('run_count', models.IntegerField()),
            ],
            options={
                'db_table': 'catalog_retained_column_edge',
                'constraints': [models.UniqueConstraint(fields=('job_key', 'target_key', 'source_key', 'key_hash'), name='catalog_retained_column_uniq')],
            },
        ),
        migrations.CreateModel(
            name='RetainedEdge',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('job_key', models.BinaryField(max_length=32)),
                ('source_key', models.BinaryField(max_length=32)),
                ('target_key', models.BinaryField(max_length=32)),
                ('first_seen', models.DateTimeField()),
                ('last_seen', models.DateTimeField()),
                ('run_count', models.IntegerField()),
                ('completed_run_count', models.IntegerField()),
            ],
            options={
                'db_table': 'catalog_retained_edge',
                'constraints': [models.UniqueConstraint(fields=('job_key', 'source_key', 'target_key'), name='catalog_retained_edge_uniq')],
            },
        ),
        migrations.CreateModel(
            name='RetainedJob',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('key_hash', models.BinaryField(max_length=32)),
                ('namespace', models.TextField()),
                ('name', models.TextField()),
                ('first_seen', models.DateTimeField(null=True)),
                ('last_seen', models.DateTimeField(null=True)),
                ('facets', models.JSONField(default=dict)),
                ('facet_versions', models.JSONField(default=dict)),
                ('parent', models.JSONField(null=True)),
                ('is_placeholder', models.BooleanField(default=False)),
            ],
            options={
                'db_table': 'catalog_retained_job',
                'constraints': [models.UniqueConstraint(fields=('key_hash',), name='catalog_retained_job_uniq')],
            },
        ),
        migrations.CreateModel(
            name='RetainedJobEdge',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('job_key', models.BinaryField(max_length=32)),
                ('dataset_key', models.BinaryField(max_length=32)),
                ('direction', models.CharField(max_length=6)),
                ('first_seen', models.DateTimeField()),
                ('last_seen', models.DateTimeField()),
                ('run_count', models.IntegerField()),
                ('completed_run_count', models.IntegerField()),
            ],
            options={
                'db_table': 'catalog_retained_job_edge',
                'constraints': [models.UniqueConstraint(fields=('job_key', 'dataset_key', 'direction'), name='catalog_retained_job_edge_uniq')],
            },
        ),
        migrations.CreateModel(
            name='RetainedLink',
            fields=[
                ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                ('alias_a', models.BinaryField(max_length=32)),
                ('alias_b', models.BinaryField(max_length=32)),
                ('reason', models.CharField(max_length=8)),
            ],
            options={
                'db_table': 'catalog_retained_link',
                'constraints': [models.UniqueConstraint(fields=('alias_a', 'alias_b'), name='catalog_retained_link_uniq')],
            },
        ),
    ]
