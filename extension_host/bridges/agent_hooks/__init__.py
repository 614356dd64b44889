"""Hooks of other agents (Claude Code, Gemini CLI) answered by this project's extensions.

Each agent's table (:mod:`.claude`, :mod:`.gemini`) maps its hook events onto our hook points;
:mod:`.adapter` is what every hook command shares (read the payload, ask, answer, fail closed),
:mod:`.client` the command's light control-socket client, :mod:`.deadline` the one deadline its
waits draw from, :mod:`.health` the unhealthy mark of a host that stopped answering. The
background host (:mod:`.background_host`) is started on demand (:mod:`.host_start`), or a host for
one call (:mod:`.one_shot`); :mod:`.install` merges the agents' settings and checks them, and
:mod:`.gemini_trust` tells whether Gemini CLI runs a project's hooks at all.

A hook command imports nothing of the host until it must: no event loop, no pydantic.
"""
