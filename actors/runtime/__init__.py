"""How actors live and talk: the traced port every actor sends through (``port.py``: ``RunContext``,
``TracedActor``, ``Peer``, the Pykka runtime), the threads a run's actors share (``dispatcher.py``,
``mailbox.py``), an actor's own event loop (``loop_thread.py``), and the
Ray runtime (``ray_runtime.py``, ``ray_host.py``, ``ray_model_server.py``)."""
