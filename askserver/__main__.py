"""`askserver` (the installed command) and `python -m askserver`: manage.py for an installed askserver.

`askserver migrate`, `askserver quickstart`, `askserver createtoken USER`,
`askserver askserver_config`: every management command, with askserver's settings, the data
folder prepared first (:func:`askserver.var.prepare_var_dir`).
"""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "askserver.settings")
    from askserver.var import prepare_var_dir

    prepare_var_dir()
    from django.core.management import execute_from_command_line

    execute_from_command_line([sys.argv[0] or "askserver", *sys.argv[1:]])


if __name__ == "__main__":
    main()
