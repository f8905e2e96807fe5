# Foreign keys whose index duplicated a unique constraint or index starting with the
# column lose it: one index fewer to maintain per write (ADR 0025).

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('catalog', '0004_alias_rule_detach'),
        ('ingest', '0002_derivation_scale_md5_lookups'),
    ]

    operations = [
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
    ]
