"""Starting and stopping extension processes.

Spawn and the log each one writes (:mod:`.process`, :mod:`.logs`), signalling a process group
and the stop ladder (:mod:`.process_groups`), the warm interpreter that forks Python extensions
(:mod:`.forkserver`), Node.js and the Copilot SDK for JavaScript ones (:mod:`.node_sdk`,
``node/``), and the pipe that takes every extension down with the host (:mod:`.lifeline`).
:mod:`.interpreter` is how every Python process the project starts is started, isolated from its
working folder.

This package knows processes, descriptors and files; it does not speak the protocol.
"""
