"""Writer for the reference-vector text format read by tests/unit/vectors.h.

    # comment lines (anywhere between entries)
    case NAME
    FIELD RANK D0 ... D(RANK-1)
    numbers, row-major, %.17g, whitespace separated (RANK 0: one number)
    ...
    end

Integers (sizes, valid_lens) are written as numbers too. 17 significant
digits read back to the same double with any correctly rounding strtod.
"""
import numpy as np


class VecWriter:
    def __init__(self, path, header):
        self.f = open(path, "w")
        for line in header.strip().splitlines():
            self.f.write("# " + line + "\n")

    def case(self, name, fields):
        """fields: list of (name, array-like or scalar); None values skipped."""
        self.f.write("case %s\n" % name)
        for field, value in fields:
            if value is None:
                continue
            a = np.asarray(value, dtype=np.float64)
            self.f.write("%s %d%s\n" % (field, a.ndim,
                                        "".join(" %d" % d for d in a.shape)))
            flat = a.reshape(-1)
            for i in range(0, flat.size, 6):
                self.f.write(" ".join("%.17g" % x for x in flat[i:i + 6]))
                self.f.write("\n")
        self.f.write("end\n")

    def close(self):
        self.f.close()
