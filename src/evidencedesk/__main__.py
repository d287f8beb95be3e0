"""``python -m evidencedesk``: the same command line as ``evidencedesk``."""

from evidencedesk.cli import main

if __name__ == "__main__":
    main()
