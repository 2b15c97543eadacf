"""The videogen command: the dev stack, migrations and key admin, on top of the three services."""
