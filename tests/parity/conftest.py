"""The parity corpus is data: its modules run only in their own temporary directories, through `runner.py`."""

collect_ignore_glob = ['corpus/*']
