"""`harness sample` (placeholder registered so the CLI shape is fixed; its owner replaces this file)."""


def register(subparsers) -> None:
    parser = subparsers.add_parser("sample", help="(not built yet)")
    parser.set_defaults(handler=lambda args: print("harness sample: not built yet") or 2)
