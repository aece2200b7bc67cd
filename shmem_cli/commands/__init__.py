"""Subcommands that live in their own modules, loaded only when used (see cli.LazyGroup)."""
