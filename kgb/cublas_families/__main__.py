import sys

from kgb.cublas_families.generate import main

sys.exit(main())
