import sys

from kgb.aten_families.generate import main

sys.exit(main())
