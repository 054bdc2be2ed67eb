"""Agent methods: a workspace per trial, a check tool wired to the judge, drivers that run
an agent in it (kgb's own tool-use loop, or the Claude Code or OpenCode CLI through kgb's
model proxy), budgets, and the choice of the final kernel."""
