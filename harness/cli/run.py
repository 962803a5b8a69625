"""`harness run` (placeholder registered so the CLI shape is fixed; its owner replaces this file)."""


def register(subparsers) -> None:
    parser = subparsers.add_parser("run", help="(not built yet)")
    parser.set_defaults(handler=lambda args: print("harness run: not built yet") or 2)
