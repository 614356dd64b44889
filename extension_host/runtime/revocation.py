"""Taking a grant back from the extension processes that hold its value.

A secret setting the user kept for an extension counts as a grant to it
(:mod:`extension_host.project.settings`): unsetting it takes it back the same way.

An extension granted a withheld variable got its value when it joined
(:attr:`~extension_host.project.environment.EnvironmentGrant.withheld`); the value stays in that process,
and in whatever it started, for as long as they run. So once the user takes the grant back,
every instance that holds the value (the current one, a version still draining after a hot
reload) is stopped at once with the whole stop ladder, its process group included, whatever a
new version would do (:meth:`~extension_host.runtime.instance.ExtensionInstance.revoke`). A record that
cannot be read grants nothing: the holders are stopped too, as a join would be refused.

This module finds the holders and stops them; which instances exist and what becomes of their
extension is the supervisor's, where grants are kept :mod:`extension_host.project.trust`'s.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable

from ..errors import ExtensionHostError
from .context import GrantLookup
from .instance import ExtensionInstance

__all__ = ["stop_revoked"]


async def stop_revoked(instances: Iterable[ExtensionInstance], grants: GrantLookup) -> list[ExtensionInstance]:
    """Stop every one of ``instances`` that holds the value of a variable ``grants`` no longer
    grants it, all at once; returns those stopped (once each have ended)."""
    holders: list[tuple[ExtensionInstance, tuple[str, ...]]] = []
    for instance in dict.fromkeys(instances):
        names = _revoked(instance, grants)
        if names:
            holders.append((instance, names))
    await asyncio.gather(*(instance.revoke(names) for instance, names in holders))
    return [instance for instance, _ in holders]


def _revoked(instance: ExtensionInstance, grants: GrantLookup) -> tuple[str, ...]:
    """The withheld variables ``instance`` holds and is no longer granted (nor set as one of its
    secret settings); none once its
    process group has been stopped (nothing of it holds anything any more)."""
    process = instance.process
    if not instance.environment.withheld or process is None or process.stopped:
        return ()
    try:
        allowed = grants(instance.spec)
    except ExtensionHostError:
        allowed = frozenset()
    return instance.environment.revoked(allowed | instance.secret_settings_now())
