"""Analyses of the program and its states that both the reductions (``reduce/``) and the instrumentations
(``instrument/``) use: the classification of locations and their exclusive access predicates
(``classify``), the declared disciplines' locations (``declarations``), what kind of mover a step is
(``mover``), thread-locality by dynamic (``escape``) and static (``static_escape``) escape analysis, and the
static footprints of steps (``footprint``). They import neither ``reduce/`` nor ``instrument/``."""
