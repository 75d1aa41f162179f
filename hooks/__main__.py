from oracle_guard.cli import main

raise SystemExit(main())
