"""What a person types and sees: the ``extensions`` command and its text.

The command (:mod:`.cli`, with :mod:`.one_shot` for how a command reaches extensions and
:mod:`.trust_commands` for ``trust`` and ``grant``), the author's loop ``extensions dev``
(:mod:`.dev`), and the text both print (:mod:`.render`, printed through :mod:`.output`).

Front ends sit on top of the host and the control socket; nothing below imports them.
"""
