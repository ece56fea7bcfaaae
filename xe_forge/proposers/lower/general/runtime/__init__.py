"""The general path's kernels and launchers, as real modules: emit.py copies the functions a port
uses (by name, with what they call) into the port's file, which then imports nothing from xe-forge.
Every top-level name starts with `xfg_` so it cannot clash with the reference's or Inductor's names.
"""
