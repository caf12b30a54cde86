"""Liveness (issue 26): properties about the infinite runs of a model, checked as fair cycles.

``ltl`` parses the LTL-X formulas of ``ltl("...")`` declarations (SPIN's syntax) and gives their reference
semantics on lassos; ``buchi`` translates a formula to a generalized Büchi automaton (Gerth, Peled, Vardi and
Wolper 1995), which the fair-cycle search runs in product with the model."""
