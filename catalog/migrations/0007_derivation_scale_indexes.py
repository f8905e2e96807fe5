# Index upkeep that grew with history (ADR 0025): hash indexes on shared values become
# btree on md5(column); foreign keys whose index repeated a unique constraint or index
# starting with the column lose it.

import django.db.models.deletion
import django.db.models.functions.text
import ingest.models
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0006_fidelity'),
        ('ingest', '0003_derivation_scale_md5_lookups'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='dataset',
            name='catalog_dataset_ns_hash',
        ),
        migrations.RemoveIndex(
            model_name='job',
            name='catalog_job_namespace_hash',
        ),
        migrations.RemoveIndex(
            model_name='metadatarecord',
            name='catalog_meta_resource_hash',
        ),
        migrations.RemoveIndex(
            model_name='metadatarecord',
            name='catalog_meta_subject_hash',
        ),
        migrations.RemoveIndex(
            model_name='metadatarecord',
            name='catalog_meta_action_hash',
        ),
        migrations.AlterField(
            model_name='aliaslink',
            name='alias_a',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='aliaslink',
            name='alias_b',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='columnlineageedge',
            name='source',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='columnlineageedge',
            name='target',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='columnlineagefact',
            name='run',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.run'),
        ),
        migrations.AlterField(
            model_name='columnlineagefact',
            name='target_alias',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='dataset',
            name='namespace',
            field=ingest.models.DigestIndexedText(),
        ),
        migrations.AlterField(
            model_name='datasetalias',
            name='dataset',
            field=models.ForeignKey(db_index=False, null=True, on_delete=django.db.models.deletion.SET_NULL, related_name='aliases', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='datasetfield',
            name='dataset',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='fields', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='eventdataset',
            name='alias',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='eventdataset',
            name='event',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='ingest.event'),
        ),
        migrations.AlterField(
            model_name='job',
            name='namespace',
            field=ingest.models.DigestIndexedText(),
        ),
        migrations.AlterField(
            model_name='jobdataset',
            name='alias',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='jobdataset',
            name='job',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='datasets', to='catalog.job'),
        ),
        migrations.AlterField(
            model_name='lineageedge',
            name='job',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='edges', to='catalog.job'),
        ),
        migrations.AlterField(
            model_name='lineageedge',
            name='source',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='out_edges', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='lineageedge',
            name='target',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='in_edges', to='catalog.dataset'),
        ),
        migrations.AlterField(
            model_name='lineageedgerun',
            name='edge',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='catalog.lineageedge'),
        ),
        migrations.AlterField(
            model_name='lineageedgerun',
            name='run',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='edge_runs', to='catalog.run'),
        ),
        migrations.AlterField(
            model_name='metadatarecord',
            name='action',
            field=ingest.models.DigestIndexedText(),
        ),
        migrations.AlterField(
            model_name='metadatarecord',
            name='resource',
            field=ingest.models.DigestIndexedText(),
        ),
        migrations.AlterField(
            model_name='metadatarecord',
            name='subject',
            field=ingest.models.DigestIndexedText(),
        ),
        migrations.AlterField(
            model_name='run',
            name='job',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='runs', to='catalog.job'),
        ),
        migrations.AlterField(
            model_name='rundataset',
            name='alias',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='+', to='catalog.datasetalias'),
        ),
        migrations.AlterField(
            model_name='rundataset',
            name='run',
            field=models.ForeignKey(db_index=False, on_delete=django.db.models.deletion.CASCADE, related_name='datasets', to='catalog.run'),
        ),
        migrations.AddIndex(
            model_name='dataset',
            index=models.Index(django.db.models.functions.text.MD5('namespace'), name='catalog_dataset_ns_md5'),
        ),
        migrations.AddIndex(
            model_name='job',
            index=models.Index(django.db.models.functions.text.MD5('namespace'), name='catalog_job_namespace_md5'),
        ),
        migrations.AddIndex(
            model_name='metadatarecord',
            index=models.Index(django.db.models.functions.text.MD5('resource'), name='catalog_meta_resource_md5'),
        ),
        migrations.AddIndex(
            model_name='metadatarecord',
            index=models.Index(django.db.models.functions.text.MD5('subject'), name='catalog_meta_subject_md5'),
        ),
        migrations.AddIndex(
            model_name='metadatarecord',
            index=models.Index(django.db.models.functions.text.MD5('action'), name='catalog_meta_action_md5'),
        ),
    ]
