"""The array commands (ARSET, ARGET, ARRANGE ...), Redis 8.8's array type."""
