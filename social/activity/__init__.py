"""The activity log (docs/explanation/activity-log.md "Activity log"): every user action as one
DynamoDB item in a table per month, a write-sharded day index, and a daily rollup into the relational database.

models        the PynamoDB model of one month's table (a cached class per month) and the
              ORM models of the daily rollup
periods       months and days in the site's time zone; a day's `by_day` partitions
month_tables  one month's table: created on demand, listed, cooled, dropped
archive       a month's table exported (file or S3) and checked before it is dropped
rotation      every month's table taken through its life (`activity_tables`)
services      recording an action (inside the action's transaction, or on its own)
rollup        counting one day into the relational database
selectors     reads: the rollup for staff, a user's own recent activity
"""
