"""One row by one column, with the ORM's SQL compiled once per database connection.

Every request checks its caller: an API token (project.identity.api_tokens), or a session and
its user (project.identity.sessions). `Model.objects.get(...)` builds and compiles the same
query again each time, several times the cost of running it; `CompiledGet` compiles it on a
connection's first use and then only runs it. Only the SQL text and how to read its columns
are kept, never a row: each call reads the database, so what changed there (a revoked token,
an ended session, a deactivated account) is seen by the next request.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

from django.db import connections, router
from django.db.models import Model

if TYPE_CHECKING:
    from collections.abc import Callable

    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import Field
    from django.db.models.sql.compiler import SQLCompiler

M = TypeVar("M", bound=Model)


@dataclass(frozen=True)
class _Columns:
    model: type[Model]
    start: int
    end: int
    names: list[str]
    setters: tuple[Callable[[Model, Model | None], None], Callable[[Model, Model], None]] | None = None


@dataclass(frozen=True)
class _Compiled:
    compiler: SQLCompiler
    sql: str
    converters: dict[int, Any]
    columns: list[_Columns]  # the model's own first, then each select_related one


class CompiledGet(Generic[M]):
    """`model.objects.select_related(*related).get(**{field: value})` for a unique `field`, or None."""

    def __init__(self, model: type[M], field: str, *, placeholder: Any, related: tuple[str, ...] = ()) -> None:
        self.model = model
        self.field_name = field
        self.placeholder = placeholder
        self.related = related
        self._compiled: weakref.WeakKeyDictionary[BaseDatabaseWrapper, _Compiled] = weakref.WeakKeyDictionary()

    @property
    def field(self) -> Field[Any, Any]:
        if self.field_name == "pk":
            return self.model._meta.pk
        return self.model._meta.get_field(self.field_name)  # type: ignore[return-value]

    def _compile(self, connection: BaseDatabaseWrapper) -> _Compiled:
        queryset = (
            self.model._default_manager.select_related(*self.related)
            if self.related
            else self.model._default_manager.all()
        )
        # Any value of the field's type: only the SQL text is kept, each call binds its own value.
        queryset = queryset.filter(**{self.field_name: self.placeholder})
        compiler = queryset.query.get_compiler(connection=connection)
        sql, params = compiler.as_sql()  # fills compiler.select and klass_info
        if len(params) != 1:
            raise ValueError(f"{self.model.__name__}.{self.field_name}: one parameter expected, got {len(params)}")
        info = compiler.klass_info

        def columns(info: dict[str, Any], *, setters: bool) -> _Columns:
            start, end = info["select_fields"][0], info["select_fields"][-1] + 1
            return _Columns(
                model=info["model"],
                start=start,
                end=end,
                names=[column[0].target.attname for column in compiler.select[start:end]],
                setters=(info["local_setter"], info["remote_setter"]) if setters else None,
            )

        return _Compiled(
            compiler=compiler,
            sql=sql,
            converters=compiler.get_converters([column[0] for column in compiler.select]),
            columns=[columns(info, setters=False)]
            + [columns(related, setters=True) for related in info.get("related_klass_infos", [])],
        )

    def get(self, value: Any) -> M | None:
        alias = router.db_for_read(self.model)
        connection = connections[alias]
        compiled = self._compiled.get(connection)
        if compiled is None:
            compiled = self._compiled[connection] = self._compile(connection)
        parameter = self.field.get_db_prep_value(value, connection, prepared=False)
        with connection.cursor() as cursor:
            cursor.execute(compiled.sql, (parameter,))
            row = cursor.fetchone()
        if row is None:
            return None
        if compiled.converters:
            [row] = compiled.compiler.apply_converters([row], compiled.converters)
        own, *related = compiled.columns
        found = own.model.from_db(alias, own.names, row[own.start : own.end])
        for columns in related:
            values = row[columns.start : columns.end]
            other = (
                None if all(each is None for each in values) else columns.model.from_db(alias, columns.names, values)
            )
            assert columns.setters is not None
            local_setter, remote_setter = columns.setters
            local_setter(found, other)
            if other is not None:
                remote_setter(other, found)
        return found  # type: ignore[return-value]
