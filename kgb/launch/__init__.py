"""Running kgb on many hosts: a sweep routed by chip on SLURM, into one shared store.

routing: which cluster settings each job of a sweep gets, from its own chip's config
(the Hydra launcher that uses it is hydra_plugins/kgb_launcher). docs/many-hosts.md says
how a team sets this up.
"""
