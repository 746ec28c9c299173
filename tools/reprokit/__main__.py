import sys

from reprokit.cli import main

sys.exit(main())
