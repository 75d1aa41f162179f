#!/bin/sh
# oracle-guard's pre-receive hook for GitHub Enterprise Server, run in the hook
# environment examples/ghes/Dockerfile builds. It calls that environment's Python
# by absolute path, with -I (no PYTHON* variables, user site or current folder on
# the import path): GHES sets the hook's PATH, and no python on it is this one.
# --host ghes: the pusher is GITHUB_USER_LOGIN, the variable GHES sets.
exec /opt/oracle-guard/bin/python -I -m oracle_guard pre-receive --host ghes
