"""`python -m contam_cli` runs the command line."""

from contam_cli.entry import main

main()
