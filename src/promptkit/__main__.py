"""`python -m promptkit`: the same command as the `promptkit` script."""

from promptkit.cli import main

raise SystemExit(main())
