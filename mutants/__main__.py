import sys

from .meta import main

sys.exit(main())
