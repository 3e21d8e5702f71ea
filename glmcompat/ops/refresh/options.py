"""The defaults of the options of ``matrix refresh`` and ``matrix audit`` that the command line shows in its help (a
module without imports: the parser does not import the probes)."""

DEFAULT_JOBS = 4  # parallel downloads: the connections of the HTTP pool
