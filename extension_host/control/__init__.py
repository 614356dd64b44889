"""How other processes reach a running host, and only its user may.

The control socket's server and client (:mod:`.service`), ``host.hook`` as a control method
(:mod:`.hook_calls`), the Unix socket only its user can use (:mod:`.private_socket`) and the
bearer token of the network servers (:mod:`.tokens`).

This package sits on the host; the front ends, ``serve`` and the bridges use it.
"""
