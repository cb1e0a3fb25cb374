"""Options added to a command from outside its own function: typer reads a command's options
from its function's signature, so a shared option (the global ones every subcommand accepts,
the output format every report shares) is added by giving a wrapper the function's signature
plus the shared parameters. The wrapper takes their values out before the function runs."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from contextlib import AbstractContextManager
from typing import Any

import typer

#: what a wrapped command does with the added options' values (and, if it must, with its own
#: arguments, which it may change) while the command runs
Around = Callable[[typer.Context, dict[str, Any], dict[str, Any]], AbstractContextManager[None]]
CONTEXT = "_rin_context"  # the context parameter added when the command declares none


def with_options(command: Callable[..., Any], added: dict[str, inspect.Parameter],
                 around: Around) -> Callable[..., Any]:
    """`command` with the `added` parameters (keyword-only, named apart from its own); their
    values, taken out, go to `around` with the command's own arguments; inside it the command
    runs."""
    signature = inspect.signature(command, eval_str=True)
    own = list(signature.parameters.values())
    clash = set(added) & {parameter.name for parameter in own}
    assert not clash, f"{command.__name__} already has parameters named {sorted(clash)}"
    context = next((p.name for p in own if p.annotation is typer.Context), None)
    extra = [p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in added.values()]
    if context is None:
        extra.append(inspect.Parameter(CONTEXT, inspect.Parameter.KEYWORD_ONLY,
                                       annotation=typer.Context))

    @functools.wraps(command)
    def run(*args: Any, **kwargs: Any) -> Any:
        ctx = kwargs[context] if context else kwargs.pop(CONTEXT)
        with around(ctx, {name: kwargs.pop(name) for name in added}, kwargs):
            return command(*args, **kwargs)

    parameters = [*own, *extra]
    run.__signature__ = signature.replace(parameters=parameters)  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in parameters}
    return run


def option(name: str, annotation: Any, default: Any) -> inspect.Parameter:
    """One added parameter: `annotation` is `Annotated[type, typer.Option(…)]`."""
    return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, annotation=annotation,
                             default=default)
