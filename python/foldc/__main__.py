"""python3 -m foldc run FILE.fold COMMAND ARGS...: the model's driver from
the compile cache (compiled first if need be), run with COMMAND ARGS;
python3 -m foldc run FILE.fold --python: the path of its Python module.
`foldc run ...` is the same."""
import os
import sys

import foldc

USAGE = "usage: foldc run FILE.fold COMMAND [ARGS...]   |   foldc run FILE.fold --python"


def main(argv):
    if len(argv) < 3 or argv[0] != "run":
        print(USAGE, file=sys.stderr)
        return 2
    path, command = argv[1], argv[2:]
    try:
        if command == ["--python"]:
            foldc.load(path)
            print(foldc.last_load["module"])
            return 0
        driver = foldc.driver(path)
    except (foldc.CompileError, foldc.CacheError) as error:
        print(error, file=sys.stderr)
        return 1
    except OSError as error:
        print(f"foldc run: {error.filename or path}: {error.strerror}", file=sys.stderr)
        return 1
    os.execv(driver, [driver, *command])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
