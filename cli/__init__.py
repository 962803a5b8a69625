"""The `harness` command line: one module per subcommand, each importing heavy packages only when run."""
