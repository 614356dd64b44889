"""What a person types and sees: the ``extensions`` command (:mod:`.cli`), the author's loop
``extensions dev`` (:mod:`.dev`), the text both print (:mod:`.render`) and new extensions from
templates (:mod:`.scaffold`).

Front ends sit on top of the host and the control socket; nothing below imports them.
"""
