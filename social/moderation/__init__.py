"""Reports, the moderation queue and the staff audit log (docs/explanation/moderation.md "Reports and moderation").

People report a comment (`services.report_create`); a comment reported by
REPORT_HIDE_THRESHOLD distinct people is hidden until staff decide; staff work the open queue
in the admin (`admin_views`) and every staff action is a `ModerationAction` line
(`staff_services`). Tables: `reports`, `report_cases` (social/models.py).
"""
