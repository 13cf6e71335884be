"""Test-wide settings."""
from funcgrad._src import residuals

# The tape keeps only big arrays' shapes when rules do not read their values; prune every
# array in the tests, small ones included, so that the path is exercised everywhere.
residuals.PRUNE_MIN_SIZE = 1
