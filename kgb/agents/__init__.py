"""Agent methods: a workspace per trial, a check tool wired to the judge, drivers that run
an agent in it (kgb's own tool-use loop), budgets, and the choice of the final kernel."""
