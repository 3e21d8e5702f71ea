"""Byte-format readers: ELF, fatbin, wheel zip, dependency-file formats. No network."""
