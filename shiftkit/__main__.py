from shiftkit.main import main

raise SystemExit(main())
