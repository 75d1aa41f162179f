"""``oracle-guard score``: the target's tests run against the candidate's code, in
a pytest subprocess we control (tree.py builds what it runs, session.py runs it
with pytest_plugin.py loaded, verdict.py judges what the plugin recorded)."""
