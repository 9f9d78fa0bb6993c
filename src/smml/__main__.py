import sys

from smml.cli import main

sys.exit(main())
