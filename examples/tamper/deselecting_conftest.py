# As tests/conftest.py: drops the test the patch broke before it runs; test-tamper reports collection-changed.
def pytest_collection_modifyitems(config, items):
    items[:] = [item for item in items if "first_colon" not in item.name]
