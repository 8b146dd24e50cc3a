from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("social", "0008_spam_defence"),
    ]

    operations = [
        migrations.AddField(
            model_name="user", name="locale", field=models.CharField(blank=True, default="", max_length=8)
        ),
        migrations.AddField(
            model_name="user", name="time_zone", field=models.CharField(blank=True, default="", max_length=64)
        ),
        migrations.AddField(
            model_name="user", name="quiet_start", field=models.PositiveSmallIntegerField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="user", name="quiet_end", field=models.PositiveSmallIntegerField(blank=True, null=True)
        ),
        migrations.AddField(
            model_name="user", name="digest_hour", field=models.PositiveSmallIntegerField(blank=True, null=True)
        ),
    ]
