import sys

from glmcompat.cli import main

sys.exit(main())
