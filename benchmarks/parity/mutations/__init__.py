"""The mutation suite of issue #55: one rule or default of a method changed in a scratch copy,
that method's tests run against it, caught or not recorded (README.md)."""
