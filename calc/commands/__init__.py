"""The command definitions, one module per concept; :mod:`calc.api` assembles them."""
