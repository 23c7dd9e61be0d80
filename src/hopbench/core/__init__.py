"""The foundation: small modules every layer may use (files, errors, records, locks, paths);
they import nothing from the library or the harness."""
