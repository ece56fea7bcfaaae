"""`python -m xe_forge` runs the CLI (useful where the console script is not on PATH)."""

from xe_forge.cli.app import main

main()
