"""One table (``errors.ERROR_TABLE``) decides what an error means to each face: the command line exits
with its code and the service answers with its status, both with the error's message."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from fastapi.routing import APIRoute
from typer.testing import CliRunner

from evidencedesk import errors
from evidencedesk.cli.app import _Commands
from evidencedesk.errors import ERROR_TABLE, exit_code, http_status
from tests.support.server import make_client


def _example(cls: type[Exception]) -> Exception:
    """An instance of ``cls`` whose message is ``boom <name>``."""
    message = f"boom {cls.__name__}"
    if cls is errors.IngestError:
        return errors.IngestError("a.md", message)
    if cls is errors.LabelError:
        return errors.LabelError([message])
    if cls in (errors.RequestRefused, errors.PathRefused):
        return cls(418, message)
    if cls is errors.AccessError:
        return cls(401, message)
    return cls(message)


EVERY_CLASS = [row[0] for row in ERROR_TABLE] + [
    errors.PgStoreError, errors.AccessError, errors.PathRefused, errors.WriteRefused, errors.GraphLayoutError,
]  # fmt: skip


def _expected(exc: Exception) -> tuple[int, int]:
    """What the table says, read by hand: the first row whose class ``exc`` is an instance of."""
    for cls, code, status in ERROR_TABLE:
        if isinstance(exc, cls):
            return code, exc.status if isinstance(exc, errors.RequestRefused) else status
    raise AssertionError(f"{type(exc).__name__} is in no row")


def test_every_error_class_of_the_package_has_a_row_or_inherits_one() -> None:
    classes = [v for v in vars(errors).values() if isinstance(v, type) and issubclass(v, errors.EvidencedeskError)]
    assert set(classes) <= set(EVERY_CLASS)
    assert {errors.WriteRefused, errors.GraphLayoutError} <= set(classes)  # part of the one hierarchy now
    for i, (cls, _, _) in enumerate(ERROR_TABLE):  # a subclass never stands after its base (it would never match)
        assert not any(issubclass(cls, earlier) for earlier, _, _ in ERROR_TABLE[:i]), cls


def test_the_table_by_hand() -> None:
    assert (exit_code(errors.ConfigError("x")), http_status(errors.ConfigError("x"))) == (2, 400)
    assert (exit_code(errors.NothingInScope("x")), http_status(errors.NothingInScope("x"))) == (2, 409)
    assert (exit_code(ValueError("x")), http_status(ValueError("x"))) == (2, 400)
    assert (exit_code(errors.GenerationError("x")), http_status(errors.GenerationError("x"))) == (1, 503)
    assert (exit_code(errors.WriteRefused("x")), http_status(errors.WriteRefused("x"))) == (1, 403)
    assert (exit_code(errors.AccessError(401, "x")), http_status(errors.AccessError(401, "x"))) == (1, 401)
    assert (exit_code(OSError("x")), http_status(OSError("x"))) == (1, 500)  # named by no row


@pytest.mark.parametrize("cls", EVERY_CLASS, ids=lambda c: c.__name__)
def test_the_command_line_exits_as_the_table_says(cls: type[Exception]) -> None:
    exc = _example(cls)
    app = typer.Typer(cls=_Commands)

    @app.command()
    def fails() -> None:
        raise exc

    @app.command()
    def other() -> None:  # two commands, so the group (and its error handling) runs
        pass

    result = CliRunner().invoke(app, ["fails"])
    assert result.exit_code == _expected(exc)[0]
    assert str(exc).splitlines()[0] in result.stderr


@pytest.mark.parametrize("cls", EVERY_CLASS, ids=lambda c: c.__name__)
def test_the_service_answers_as_the_table_says(cls: type[Exception], kestrel_store: Path) -> None:
    exc = _example(cls)

    def fails() -> None:
        raise exc

    with make_client(kestrel_store) as client:
        client.app.router.routes.insert(0, APIRoute("/fails", fails))  # type: ignore[attr-defined]
        response = client.get("/fails")
    assert response.status_code == _expected(exc)[1]
    message = exc.message if isinstance(exc, errors.RequestRefused) else str(exc)
    assert response.json() == {"detail": message}
    assert ("www-authenticate" in response.headers) == (response.status_code == 401)
