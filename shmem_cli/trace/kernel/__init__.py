"""The kernel as read: cubins, fat binaries, parameter names, demangled names, tensor
maps, and the launch built from the command line."""
