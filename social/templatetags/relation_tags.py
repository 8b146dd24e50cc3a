"""`{% relation_with person as relation %}`: the signed-in visitor's block and mute of `person`
(one GetItem), or None for an anonymous visitor and for the person themself."""

from django import template

from social.relations.selectors import RelationState, relation_get

register = template.Library()


@register.simple_tag(takes_context=True)
def relation_with(context, person) -> RelationState | None:
    user = getattr(context.get("request"), "user", None)
    if user is None or not user.is_authenticated or str(user.pk) == str(person.id):
        return None
    return relation_get(user_id=str(user.pk), other_id=str(person.id))
