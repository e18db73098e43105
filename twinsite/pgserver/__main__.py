"""``python -m twinsite.pgserver start|stop|status|url``."""

import sys

from twinsite.pgserver import main

sys.exit(main(sys.argv[1:]))
