#!/usr/bin/env python
"""Django's command-line utility for administrative tasks; it prepares askserver's data folder first (askserver/var.py)."""

from __future__ import annotations

import os
import sys


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "askserver.settings")
    from askserver.var import prepare_var_dir

    prepare_var_dir()
    from django.core.management import execute_from_command_line

    execute_from_command_line(sys.argv)


if __name__ == "__main__":
    main()
