"""``python -m ccfair`` runs the command line."""

from ccfair.cli import main

main()
