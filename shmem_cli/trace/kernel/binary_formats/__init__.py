"""The binary formats a kernel arrives in, read with the standard library from bounded
bytes, nothing a header claims trusted: ``elf`` the sections and symbols of an ELF file (a
cubin), ``elf_arch`` the SM its header names (ABI 7 and 8), ``fatbin`` the cubins a host
executable's fat binary embeds. What they hold (kernels, constants, relocations) is read
by the modules of ``kernel/``."""
