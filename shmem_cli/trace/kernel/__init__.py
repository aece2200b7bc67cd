"""The kernel as read: cubins (their ELF and fat-binary containers in ``binary_formats/``),
parameter names, demangled names, tensor maps, and the launch built from the command line."""
