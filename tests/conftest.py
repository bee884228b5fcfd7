pytest_plugins = ['pytester']
