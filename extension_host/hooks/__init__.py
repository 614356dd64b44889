"""Hooks across extensions: every implementation of a hook point, in order, outputs combined.

The pluggy specifications for in-process plugins (:mod:`.specs`), running every implementation
of a hook point in order, with matchers, timeouts and health (:mod:`.runner`), and how their
outputs combine (:mod:`.composition`).

What a hook point is (its input, its output, which field it rewrites, how outputs merge, whether
it is a guard) is one entry of the table in :mod:`extension_protocol.hook_points`; nothing here names a hook.
"""
