"""``python -m karta.controller``."""

from karta.controller.main import main

raise SystemExit(main())
