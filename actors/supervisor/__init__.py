"""The supervisor actor, one package: the actor and its protocol (``actor.py``), the state its
behaviours share (``state.py``), and one module per behaviour: turn handout, failures and
deadlines, the end of the run, and the restore of a resumed run."""
